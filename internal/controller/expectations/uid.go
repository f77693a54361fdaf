package expectations

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// UIDTracking is Expectations that also remember which objects (by
// namespace/name key) a controller is deleting. A graceful deletion is
// observed twice, once as the update setting deletionTimestamp and once as
// the delete; only the first observation of an expected key counts.
type UIDTracking struct {
	*Expectations

	mu sync.Mutex
	// deleting holds, per controller key, the object keys whose deletion
	// has not been observed yet.
	deleting map[string]sets.Set[string]
}

// NewUIDTracking returns empty expectations that tell time with clk (a real
// clock if nil).
func NewUIDTracking(clk clock.PassiveClock) *UIDTracking {
	return &UIDTracking{Expectations: New(clk), deleting: map[string]sets.Set[string]{}}
}

// GetUIDs returns a copy of the object keys key still expects to see
// deleted, or nil.
func (u *UIDTracking) GetUIDs(key string) sets.Set[string] {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s, ok := u.deleting[key]; ok {
		return s.Clone()
	}
	return nil
}

// ExpectDeletions sets key to expect the deletion of exactly objKeys,
// replacing whatever it expected before.
func (u *UIDTracking) ExpectDeletions(logger klog.Logger, key string, objKeys []string) {
	expected := sets.New(objKeys...)
	logger.V(4).Info("Controller waiting on deletions", "controller", key, "keys", objKeys)
	u.mu.Lock()
	defer u.mu.Unlock()
	if existing := u.deleting[key]; existing.Len() != 0 {
		logger.Error(nil, "Clobbering existing delete keys", "keys", sets.List(existing))
	}
	u.deleting[key] = expected
	u.Expectations.ExpectDeletions(logger, key, expected.Len())
}

// DeletionObserved records that the object objKey was seen deleted (or
// terminating). It lowers the expectations of key only the first time, and
// only if key was waiting for objKey.
func (u *UIDTracking) DeletionObserved(logger klog.Logger, key, objKey string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.deleting[key]; s.Has(objKey) {
		logger.V(4).Info("Controller received delete for pod", "controller", key, "key", objKey)
		u.Expectations.DeletionObserved(logger, key)
		s.Delete(objKey)
	}
}

// DeleteExpectations forgets key and the deletions it was waiting for.
func (u *UIDTracking) DeleteExpectations(logger klog.Logger, key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.Expectations.DeleteExpectations(logger, key)
	delete(u.deleting, key)
}
