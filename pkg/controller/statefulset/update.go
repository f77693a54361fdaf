package statefulset

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/history"
	"github.com/kcm-dev/kcm/pkg/features"
)

// maxBatchSize bounds the concurrent writes of one batch in Parallel mode.
const maxBatchSize = 500

// rollout is one sync's view of a StatefulSet: the set at its current and
// update revisions, and its pods by ordinal. The sets are read-only: the
// cache's object, or copies with a revision applied.
type rollout struct {
	set                   *apps.StatefulSet
	currentSet, updateSet *apps.StatefulSet
	current, update       *apps.ControllerRevision
	// replicas holds, at ordinal-start, the pod of every ordinal set
	// wants; a pod not created yet has no phase.
	replicas []*v1.Pod
	// condemned are the pods of ordinals out of range, highest first.
	condemned []*v1.Pod
	// firstUnavailable is the lowest unavailable replica, or else the
	// lowest unavailable condemned pod.
	firstUnavailable *v1.Pod
	// monotonic is OrderedReady pod management: one pod at a time.
	monotonic bool
	now       time.Time
	status    apps.StatefulSetStatus
}

// updateStatefulSet reconciles set's revisions, pods and claims and writes
// its status; pods are the set's claimed pods. It returns the status
// written, or nil with an error. Old revisions are pruned whatever
// happened.
func (c *Controller) updateStatefulSet(ctx context.Context, set *apps.StatefulSet, pods []*v1.Pod, now time.Time) (*apps.StatefulSetStatus, error) {
	patch, err := c.patches.get(set)
	if err != nil {
		return nil, err
	}
	revs, err := c.listRevisions(set)
	if err != nil {
		return nil, err
	}
	history.Sort(revs)
	current, update, status, err := c.performUpdate(ctx, set, patch, pods, revs, now)
	truncateErr := c.truncateHistory(ctx, set, pods, revs, current, update)
	if err != nil {
		errs := []error{err}
		if agg, ok := err.(utilerrors.Aggregate); ok {
			errs = agg.Errors()
		}
		return nil, utilerrors.NewAggregate(append(errs, truncateErr))
	}
	return status, truncateErr
}

// performUpdate finds the revisions, reconciles the pods and writes the
// status (also when reconciling failed part-way).
func (c *Controller) performUpdate(ctx context.Context, set *apps.StatefulSet, patch []byte, pods []*v1.Pod, revs []*apps.ControllerRevision, now time.Time) (current, update *apps.ControllerRevision, status *apps.StatefulSetStatus, err error) {
	logger := klog.FromContext(ctx)
	current, update, collisionCount, err := c.revisions(ctx, set, patch, revs)
	if err != nil {
		return current, update, nil, err
	}
	status, err = c.reconcile(ctx, set, patch, current, update, collisionCount, pods, now)
	if err != nil && status == nil {
		return current, update, nil, err
	}
	statusErr := c.writeStatus(ctx, set, status, pods)
	switch {
	case err != nil:
		if statusErr != nil {
			logger.Error(statusErr, "Could not update status", "statefulSet", klog.KObj(set))
		}
		return current, update, status, err
	case statusErr != nil:
		return current, update, status, statusErr
	}
	logger.V(4).Info("StatefulSet revisions", "statefulSet", klog.KObj(set),
		"currentRevision", status.CurrentRevision, "updateRevision", status.UpdateRevision)
	return current, update, status, nil
}

// reconcile creates, updates and deletes pods to move set towards
// spec.replicas pods, Running and Ready, at the revisions the update
// strategy wants, and returns the status to write.
func (c *Controller) reconcile(ctx context.Context, set *apps.StatefulSet, patch []byte, current, update *apps.ControllerRevision,
	collisionCount int32, pods []*v1.Pod, now time.Time) (*apps.StatefulSetStatus, error) {
	r, err := c.newRollout(ctx, set, patch, current, update, collisionCount, pods, now)
	if r == nil || err != nil {
		return nil, err
	}
	if set.DeletionTimestamp != nil {
		// Only the status, from every claimed pod.
		return &r.status, nil
	}
	if set.Spec.UpdateStrategy.Type == apps.RecreateStatefulSetStrategyType {
		done, err := c.recreateDeleteAndWait(ctx, r)
		if err != nil || !done {
			r.refreshStatus()
			return &r.status, err
		}
		if current.Name != update.Name {
			setProgressingCondition(&r.status, v1.ConditionTrue, recreateInProgressReason, "Waiting for new-revision pods to be created")
		}
	}
	if exit, err := runForAll(r.replicas, func(i int) (bool, error) { return c.processReplica(ctx, r, i) }, r.monotonic); exit || err != nil {
		r.refreshStatus()
		return &r.status, err
	}
	if exit, err := runForAll(r.condemned, func(i int) (bool, error) { return c.fixCondemnedClaims(ctx, r, i) }, r.monotonic); exit || err != nil {
		r.refreshStatus()
		return &r.status, err
	}
	// In OrderedReady mode every replica is now Running, Ready and
	// Available: condemned pods go, highest ordinal first. Scaling comes
	// before updating.
	if exit, err := runForAll(r.condemned, func(i int) (bool, error) { return c.processCondemned(ctx, r, i) }, r.monotonic); exit || err != nil {
		r.refreshStatus()
		return &r.status, err
	}
	r.refreshStatus()
	switch set.Spec.UpdateStrategy.Type {
	case apps.OnDeleteStatefulSetStrategyType, apps.RecreateStatefulSetStrategyType:
		return &r.status, nil
	}
	if c.features.maxUnavailable {
		return c.rollWithBudget(ctx, r)
	}
	return c.rollOneAtATime(ctx, r)
}

// newRollout applies the revisions, computes the status from pods, and
// sorts pods into replicas (missing ones built at their revision) and
// condemned. It returns nil and an error if a revision does not apply, or
// the strategy is Recreate while its feature gate is off (with a Warning
// Event, as upstream).
func (c *Controller) newRollout(ctx context.Context, set *apps.StatefulSet, patch []byte, current, update *apps.ControllerRevision,
	collisionCount int32, pods []*v1.Pod, now time.Time) (*rollout, error) {
	currentSet, err := c.patches.atRevision(set, patch, current)
	if err != nil {
		return nil, err
	}
	updateSet, err := c.patches.atRevision(set, patch, update)
	if err != nil {
		return nil, err
	}
	if set.Spec.UpdateStrategy.Type == apps.RecreateStatefulSetStrategyType && !c.features.recreate {
		err := fmt.Errorf("statefulset %s/%s uses Recreate strategy but feature gate %s is disabled", set.Namespace, set.Name, features.StatefulSetRecreateStrategy)
		c.recorder.Event(set, v1.EventTypeWarning, "UnknownStrategy", err.Error())
		return nil, err
	}
	r := &rollout{
		set: set, currentSet: currentSet, updateSet: updateSet, current: current, update: update,
		monotonic: set.Spec.PodManagementPolicy != apps.ParallelPodManagement,
		now:       now,
		status: apps.StatefulSetStatus{
			ObservedGeneration: set.Generation,
			CurrentRevision:    current.Name,
			UpdateRevision:     update.Name,
			CollisionCount:     &collisionCount,
		},
	}
	r.status.Conditions = append(r.status.Conditions, set.Status.Conditions...)
	countReplicas(&r.status, set.Spec.MinReadySeconds, current, update, now, pods)
	r.sortPods(pods)
	r.findFirstUnavailable(ctx)
	return r, nil
}

// sortPods puts each pod at its ordinal's place in replicas or among the
// condemned (pods without an ordinal are ignored), then builds the missing
// replicas.
func (r *rollout) sortPods(pods []*v1.Pod) {
	start := startOrdinal(r.set)
	r.replicas = make([]*v1.Pod, int(*r.set.Spec.Replicas))
	r.condemned = make([]*v1.Pod, 0, len(pods))
	for _, pod := range pods {
		switch {
		case inOrdinalRange(pod, r.set):
			r.replicas[ordinalOf(pod)-start] = pod
		case ordinalOf(pod) >= 0:
			r.condemned = append(r.condemned, pod)
		}
	}
	for i := range r.replicas {
		if r.replicas[i] == nil {
			r.replicas[i] = newVersionedPod(r.currentSet, r.updateSet, r.current.Name, r.update.Name, start+i)
		}
	}
	sort.SliceStable(r.condemned, func(i, j int) bool { return ordinalOf(r.condemned[i]) > ordinalOf(r.condemned[j]) })
}

func (r *rollout) findFirstUnavailable(ctx context.Context) {
	unavailable := 0
	minReady := r.set.Spec.MinReadySeconds
	for _, pod := range r.replicas {
		if isUnavailable(pod, minReady, r.now) {
			unavailable++
			if r.firstUnavailable == nil {
				r.firstUnavailable = pod
			}
		}
	}
	for i := len(r.condemned) - 1; i >= 0; i-- {
		if isUnavailable(r.condemned[i], minReady, r.now) {
			unavailable++
			if r.firstUnavailable == nil {
				r.firstUnavailable = r.condemned[i]
			}
		}
	}
	if unavailable > 0 {
		klog.FromContext(ctx).V(4).Info("StatefulSet has unavailable Pods", "statefulSet", klog.KObj(r.set),
			"unavailableReplicas", unavailable, "pod", klog.KObj(r.firstUnavailable))
	}
}

// refreshStatus recounts the status from replicas and condemned.
func (r *rollout) refreshStatus() {
	countReplicas(&r.status, r.set.Spec.MinReadySeconds, r.current, r.update, r.now, r.replicas, r.condemned)
}

// runForAll calls fn for every index of pods: in order, stopping at the
// first that asks to (monotonic), or all in slow-start batches, stopping
// after a batch with errors. It reports whether the caller should stop.
func runForAll(pods []*v1.Pod, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range pods {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	if err := slowStartBatch(len(pods), fn); err != nil {
		return true, err
	}
	return false, nil
}

// slowStartBatch calls fn for indexes 0..count-1 in concurrent batches of
// 1, 2, 4, ... (at most maxBatchSize), and stops after a batch in which
// some call failed, returning its errors.
func slowStartBatch(count int, fn func(int) (bool, error)) error {
	next := 0
	for batch := min(count, 1); batch > 0; batch = min(2*batch, count-next, maxBatchSize) {
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			wg.Go(func() { _, errs[i] = fn(next + i) })
		}
		wg.Wait()
		next += batch
		if err := utilerrors.NewAggregate(errs); err != nil {
			return err
		}
	}
	return nil
}
