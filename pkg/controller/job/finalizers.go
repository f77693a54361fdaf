package job

import (
	"sync"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// removeFinalizerPatch is the strategic merge patch removing the tracking
// finalizer, nil if the pod does not hold it.
func removeFinalizerPatch(pod *v1.Pod) []byte {
	if !hasTrackingFinalizer(pod) {
		return nil
	}
	return []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + batch.JobTrackingFinalizer + `"]}}`)
}

// finalizerExpectations remembers, per Job key, the pods whose tracking
// finalizer the controller removed and the informer has not yet seen
// without it. Until then a sync must not count such a pod again.
type finalizerExpectations struct {
	mu   sync.Mutex
	uids map[string]sets.Set[types.UID]
}

func newFinalizerExpectations() *finalizerExpectations {
	return &finalizerExpectations{uids: map[string]sets.Set[types.UID]{}}
}

// expected returns a copy of the UIDs key waits for, or nil.
func (e *finalizerExpectations) expected(key string) sets.Set[types.UID] {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.uids[key]; ok {
		return s.Clone()
	}
	return nil
}

// pending reports whether key waits for uid's removal to show.
func (e *finalizerExpectations) pending(key string, uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.uids[key].Has(uid)
}

// expect adds uids to what key waits for.
func (e *finalizerExpectations) expect(logger klog.Logger, key string, uids []types.UID) {
	logger.V(4).Info("Expecting tracking finalizers removed", "key", key, "podUIDs", uids)
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.uids[key]
	if !ok {
		s = sets.New[types.UID]()
		e.uids[key] = s
	}
	s.Insert(uids...)
}

// observed records that the pod uid was seen without the finalizer (or
// gone), or that its removal failed.
func (e *finalizerExpectations) observed(logger klog.Logger, key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.uids[key]; s.Has(uid) {
		logger.V(4).Info("Observed tracking finalizer removed", "key", key, "podUID", uid)
		s.Delete(uid)
	}
}

// forget drops everything key waits for.
func (e *finalizerExpectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.uids, key)
}
