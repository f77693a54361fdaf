package job

import (
	"context"
	"fmt"
	"sync"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// trackStatus counts finished pods exactly once and writes the status:
//
//  1. pods the Job may let go (finished, or everything once the Job ended
//     or is being deleted) are recorded: succeeded indexes in
//     completedIndexes, other pods' UIDs in uncountedTerminatedPods (at
//     most MaxUncountedPods per sync), and the interim condition
//     (FailureTarget, SuccessCriteriaMet) is added; this is written first;
//  2. their tracking finalizers are removed;
//  3. the UIDs whose finalizer is gone move to the succeeded and failed
//     counters, and once nothing is uncounted or terminating, the final
//     condition (Failed, Complete) replaces the interim one's role; this
//     is written second.
//
// A restart between any two steps counts nothing twice: a UID listed in
// uncountedTerminatedPods is counted once its finalizer is gone, and a pod
// without the finalizer is never looked at again.
func (c *Controller) trackStatus(ctx context.Context, st *syncState, needsFlush bool) error {
	logger := klog.FromContext(ctx)
	job := st.job
	if isIndexed(job) {
		// Indexes enter completedIndexes in order.
		sortByIndex(st.pods)
	}
	withFinalizer := make(sets.Set[types.UID], len(st.pods))
	for _, p := range st.pods {
		if hasTrackingFinalizer(p) && !st.expectedRmFinalizers.Has(p.UID) {
			withFinalizer.Insert(p.UID)
		}
	}
	oldStatus := job.Status
	if countUncounted(&job.Status, withFinalizer) {
		needsFlush = true
	}
	toRemove, newIndexes, actions, full, recorded := c.recordFinishedPods(logger, st)
	needsFlush = needsFlush || recorded
	if isIndexed(job) && c.recordIndexes(st, newIndexes) {
		needsFlush = true
	}
	if st.finished != nil && st.finished.Type == batch.JobFailureTarget {
		// Recorded before the finalizers go, turned into Failed after.
		job.Status.Conditions = append(job.Status.Conditions, *st.finished)
		needsFlush = true
		st.finished = finalCondition(st.finished, c.clock.Now())
	}
	if isSuccessCriteriaMet(st.finished) {
		if trueCondition(job, batch.JobSuccessCriteriaMet) == nil {
			job.Status.Conditions = append(job.Status.Conditions, *st.finished)
			needsFlush = true
		}
		st.finished = finalCondition(st.finished, c.clock.Now())
	}
	needsFlush, err := c.flushAndRemoveFinalizers(ctx, st, toRemove, withFinalizer, &oldStatus, actions, needsFlush)
	if err != nil {
		return err
	}
	finished := !full && c.enactFinished(logger, st)
	if !needsFlush && !finished {
		return nil
	}
	if _, err := c.updateStatus(ctx, st.job); err != nil {
		return fmt.Errorf("removing uncounted pods from status: %w", err)
	}
	if finished {
		c.recordFinished(st.job, st.finished)
		c.finishing.Store(st.job.UID, struct{}{})
	}
	observePodsFinished(logger, st.job, &oldStatus)
	return nil
}

// recordFinishedPods picks the pods whose finalizer can go and records
// those that finished in st.job's status (new succeeded indexes are
// returned instead). It stops once MaxUncountedPods are recorded (full).
func (c *Controller) recordFinishedPods(logger klog.Logger, st *syncState) (toRemove []*v1.Pod, newIndexes []int, actions map[string]int, full, recorded bool) {
	job := st.job
	indexed := isIndexed(job)
	uncounted := job.Status.UncountedTerminatedPods
	actions = map[string]int{}
	endedBadly := st.finished != nil && !isSuccessCriteriaMet(st.finished)
	for _, pod := range st.pods {
		if !hasTrackingFinalizer(pod) || st.expectedRmFinalizers.Has(pod.UID) {
			continue // counted by an earlier sync
		}
		failed := isPodFailed(pod, job)
		if !canRemoveFinalizer(logger, st, pod, failed) {
			continue
		}
		toRemove = append(toRemove, pod)
		switch {
		case pod.Status.Phase == v1.PodSucceeded && !st.uncountedFailed.Has(pod.UID):
			if indexed {
				// The index is enough to count a pod once.
				if ix := validIndex(pod, *job.Spec.Completions); ix != noIndex && !st.prevSucceededIndexes.has(ix) {
					newIndexes = append(newIndexes, ix)
					recorded = true
				}
			} else if !st.uncountedSucceeded.Has(pod.UID) {
				uncounted.Succeeded = append(uncounted.Succeeded, pod.UID)
				recorded = true
			}
		case failed || endedBadly:
			// Once the Job failed, every pod not succeeded counts as failed.
			if st.uncountedFailed.Has(pod.UID) || (indexed && validIndex(pod, *job.Spec.Completions) == noIndex) {
				break
			}
			m := matchFailurePolicy(job.Spec.PodFailurePolicy, pod)
			if m.action != nil {
				actions[string(*m.action)]++
			}
			if m.count {
				uncounted.Failed = append(uncounted.Failed, pod.UID)
				recorded = true
			}
		}
		if len(newIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= MaxUncountedPods {
			// Enough for one status; the rest wait for the next sync,
			// which the writes cause.
			return toRemove, newIndexes, actions, true, recorded
		}
	}
	return toRemove, newIndexes, actions, false, recorded
}

// recordIndexes writes the succeeded (and with backoffLimitPerIndex the
// failed) indexes to st.job's status and reports whether they changed.
func (c *Controller) recordIndexes(st *syncState, newIndexes []int) bool {
	status := &st.job.Status
	st.succeededIndexes = st.succeededIndexes.withIndexes(newIndexes)
	completed := st.succeededIndexes.String()
	changed := completed != status.CompletedIndexes
	status.Succeeded = int32(st.succeededIndexes.total())
	status.CompletedIndexes = completed
	var failed *string
	if hasBackoffLimitPerIndex(st.job) {
		failed = ptr.To(st.failedIndexes.String())
	}
	if !ptr.Equal(status.FailedIndexes, failed) {
		status.FailedIndexes = failed
		changed = true
	}
	return changed
}

// canRemoveFinalizer reports whether the pod need not keep the tracking
// finalizer any more: the Job ended or is being deleted, the pod
// succeeded, or it failed, unless it must stay until its index's next pod
// inherited its failure count.
func canRemoveFinalizer(logger klog.Logger, st *syncState, pod *v1.Pod, failed bool) bool {
	if st.job.DeletionTimestamp != nil || st.finished != nil || pod.Status.Phase == v1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(st.job) {
		if ix := completionIndex(pod); ix != noIndex {
			if p, ok := st.delayedDeletion[ix]; ok && p.UID == pod.UID {
				logger.V(3).Info("Delaying pod finalizer removal to await for pod recreation within the index", "pod", klog.KObj(pod))
				return false
			}
		}
	}
	return true
}

// flushAndRemoveFinalizers writes the recorded status if needed, removes
// the finalizers, and moves the UIDs whose finalizer went to the counters.
// If a removal failed, that partial progress is written at once. It
// reports whether st.job's status still needs writing.
func (c *Controller) flushAndRemoveFinalizers(ctx context.Context, st *syncState, toRemove []*v1.Pod, withFinalizer sets.Set[types.UID],
	oldStatus *batch.JobStatus, actions map[string]int, needsFlush bool) (bool, error) {
	logger := klog.FromContext(ctx)
	if needsFlush {
		updated, err := c.updateStatus(ctx, st.job)
		if err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		st.job = updated
		c.backoff.update(st.newBackoff)
		observePodsFinished(logger, st.job, oldStatus)
		*oldStatus = st.job.Status
		needsFlush = false
	}
	for action, n := range actions {
		failuresByPolicy.WithLabelValues(action).Add(float64(n))
	}
	var rmErr error
	if len(toRemove) > 0 {
		var removed []bool
		removed, rmErr = c.removeFinalizers(ctx, st.key, toRemove)
		for i, p := range toRemove {
			if removed[i] {
				withFinalizer.Delete(p.UID)
			}
		}
	}
	if countUncounted(&st.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		if _, err := c.updateStatus(ctx, st.job); err != nil {
			return needsFlush, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
	}
	return needsFlush, rmErr
}

// countUncounted moves the UIDs of uncountedTerminatedPods that no longer
// hold the finalizer to the succeeded and failed counters, and reports
// whether it moved any.
func countUncounted(status *batch.JobStatus, withFinalizer sets.Set[types.UID]) bool {
	u := status.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer.Has(uid) {
				out = append(out, uid)
			}
		}
		return out
	}
	changed := false
	if left := keep(u.Succeeded); len(left) != len(u.Succeeded) {
		status.Succeeded += int32(len(u.Succeeded) - len(left))
		u.Succeeded, changed = left, true
	}
	if left := keep(u.Failed); len(left) != len(u.Failed) {
		status.Failed += int32(len(u.Failed) - len(left))
		u.Failed, changed = left, true
	}
	return changed
}

// removeFinalizers removes the tracking finalizer from pods, concurrently,
// and reports per pod whether it is gone (a pod gone counts). The
// removals are expected before they are made.
func (c *Controller) removeFinalizers(ctx context.Context, key string, pods []*v1.Pod) ([]bool, error) {
	logger := klog.FromContext(ctx)
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	c.finalizers.expect(logger, key, uids)
	removed := make([]bool, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Go(func() {
			patch := removeFinalizerPatch(pod)
			if patch == nil {
				return
			}
			if err := c.podControl.PatchPod(ctx, pod.Namespace, pod.Name, patch); err != nil {
				// No update will show this removal.
				c.finalizers.observed(logger, key, pod.UID)
				if !apierrors.IsNotFound(err) {
					utilruntime.HandleErrorWithContext(ctx, err, "Removing tracking finalizer", "pod", klog.KObj(pod))
					errs[i] = err
					return
				}
			}
			removed[i] = true
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// enactFinished sets the final condition (and completionTime for
// Complete) once no pod is left uncounted or terminating, and reports
// whether it did.
func (c *Controller) enactFinished(logger klog.Logger, st *syncState) bool {
	if st.finished == nil {
		return false
	}
	job := st.job
	if u := job.Status.UncountedTerminatedPods; u != nil {
		if n := len(u.Succeeded) + len(u.Failed); n > 0 {
			logger.V(4).Info("Delaying marking the Job as finished, because there are still uncounted pod(s)", "job", klog.KObj(job), "condition", st.finished.Type, "count", n)
			return false
		}
	}
	if st.terminating > 0 {
		logger.V(4).Info("Delaying marking the Job as finished, because there are still terminating pod(s)", "job", klog.KObj(job), "condition", st.finished.Type, "count", st.terminating)
		return false
	}
	f := st.finished
	job.Status.Conditions, _ = setCondition(job.Status.Conditions, f.Type, f.Status, f.Reason, f.Message, c.clock.Now())
	if f.Type == batch.JobComplete {
		job.Status.CompletionTime = ptr.To(f.LastTransitionTime)
	}
	return true
}

// recordFinished records the Events (and metric) of a Job that finished.
func (c *Controller) recordFinished(job *batch.Job, cond *batch.JobCondition) {
	mode := completionMode(job)
	if cond.Type == batch.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			c.recorder.Event(job, v1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		c.recorder.Event(job, v1.EventTypeNormal, "Completed", "Job completed")
		jobsFinished.WithLabelValues(mode, resultSucceeded, cond.Reason).Inc()
		return
	}
	c.recorder.Event(job, v1.EventTypeWarning, cond.Reason, cond.Message)
	jobsFinished.WithLabelValues(mode, resultFailed, cond.Reason).Inc()
}

// updateStatus writes job's status and records the write for the
// consistency check.
func (c *Controller) updateStatus(ctx context.Context, job *batch.Job) (*batch.Job, error) {
	updated, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: updated.Namespace, Name: updated.Name}, updated.UID, jobResource, updated.ResourceVersion)
	return updated, nil
}
