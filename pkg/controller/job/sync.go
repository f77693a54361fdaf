package job

import (
	"context"
	"errors"
	"fmt"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// syncState is one sync's view of a Job: its pods and what has been
// decided about them so far.
type syncState struct {
	key string
	// job is the sync's own copy of the Job; after a status write, the
	// API server's answer.
	job        *batch.Job
	pods       []*v1.Pod
	activePods []*v1.Pod
	// active, ready and terminating are the status counters as the sync's
	// actions leave them.
	active, ready, terminating int32
	// succeeded and failed count every finished pod, counted or not.
	succeeded, failed int32
	// finished is the condition the Job reached: SuccessCriteriaMet or
	// FailureTarget while its pods are being counted, then Complete or
	// Failed.
	finished *batch.JobCondition

	// Indexed Jobs: the indexes status.completedIndexes records and those
	// plus the newly succeeded ones; with backoffLimitPerIndex, the failed
	// indexes and the failed pods whose finalizers wait for a replacement.
	prevSucceededIndexes intervals
	succeededIndexes     intervals
	failedIndexes        intervals
	delayedDeletion      map[int]*v1.Pod

	newBackoff backoffRecord
	// expectedRmFinalizers are pods whose finalizer removal the informer
	// has not shown yet: already counted.
	expectedRmFinalizers sets.Set[types.UID]
	// uncounted is status.uncountedTerminatedPods as the sync found it.
	uncountedSucceeded, uncountedFailed sets.Set[types.UID]
}

// sync reconciles the Job named by key; see the package documentation.
// It is never called concurrently for one key.
func (c *Controller) sync(ctx context.Context, key string) (rErr error) {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	defer func() { logger.V(4).Info("Finished syncing job", "key", key, "elapsed", c.clock.Since(start)) }()

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err == nil && (namespace == "" || name == "") {
		err = fmt.Errorf("invalid job key %q: either namespace or name is missing", key)
	}
	if err != nil {
		return controller.Permanent(err)
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	if err := c.consistency.EnsureReady(nn); err != nil {
		var stale *expectations.StaleCacheError
		if errors.As(err, &stale) {
			staleSyncSkips.WithLabelValues(stale.Resource.Group, stale.Resource.Resource).Inc()
		}
		return err
	}
	shared, err := c.jobs.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Job has been deleted", "key", key)
		c.expectations.DeleteExpectations(logger, key)
		c.finalizers.forget(key)
		c.consistency.Clear(nn, "")
		c.backoff.remove(key)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.shouldSync(ctx, key, shared) {
		return nil
	}
	job := shared.DeepCopy()
	action := actionReconciling
	defer func() {
		result := "success"
		if rErr != nil {
			result = "error"
		}
		syncDuration.WithLabelValues(completionMode(job), result, action).Observe(c.clock.Since(start).Seconds())
		syncTotal.WithLabelValues(completionMode(job), result, action).Inc()
	}()
	action, err = c.syncJob(ctx, key, job)
	return err
}

// shouldSync filters out the Jobs a sync must leave alone: managed by
// another controller, finished (forgetting their back-off), marked
// finished by a write the informer has not delivered, or of a completion
// mode this version does not know.
func (c *Controller) shouldSync(ctx context.Context, key string, job *batch.Job) bool {
	logger := klog.FromContext(ctx)
	if m := managedByOther(job); m != "" {
		logger.V(2).Info("Skip syncing the job as it is managed by an external controller", "key", key, "uid", job.UID, "controllerName", m)
		return false
	}
	if isFinished(job) {
		c.backoff.remove(key)
		c.consistency.Clear(types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, job.UID)
		c.finishing.Delete(job.UID)
		return false
	}
	if _, ok := c.finishing.Load(job.UID); ok {
		logger.V(2).Info("Skip syncing the job as its marked finished but the corresponding update event is not yet received", "uid", job.UID, "key", key)
		return false
	}
	if m := job.Spec.CompletionMode; m != nil && *m != batch.NonIndexedCompletion && *m != batch.IndexedCompletion {
		c.recorder.Event(job, v1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return false
	}
	if isIndexed(job) && job.Spec.Completions == nil {
		// The API server never admits this.
		logger.Info("Skip syncing the Indexed job without completions", "key", key)
		return false
	}
	return true
}

// syncJob runs a sync of job, the sync's own copy; it returns the sync's
// action for the metrics.
func (c *Controller) syncJob(ctx context.Context, key string, job *batch.Job) (string, error) {
	logger := klog.FromContext(ctx)
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batch.UncountedTerminatedPods{}
	}
	// Read the expectations before the pods: a pod observed after this
	// check is then in the cache read below, or waits for the next sync.
	satisfied := c.expectations.SatisfiedExpectations(logger, key)
	pods, err := c.podsForJob(ctx, job)
	if err != nil {
		return actionReconciling, err
	}
	st := c.newState(logger, key, job, pods)
	c.decideEnd(logger, st)

	action := actionReconciling
	var manageErr error
	suspendChanged := false
	if st.finished != nil {
		manageErr = c.deleteActivePods(ctx, st, satisfied)
	} else {
		managed := false
		if satisfied && job.DeletionTimestamp == nil {
			action, manageErr = c.manage(ctx, st)
			managed = true
		}
		if completed(st) {
			st.finished = newCondition(batch.JobSuccessCriteriaMet, v1.ConditionTrue, batch.JobReasonCompletionsReached, msgCompletionsReached, c.clock.Now())
		} else if managed {
			suspendChanged = c.setSuspended(st)
		}
	}

	status := &job.Status
	needsFlush := suspendChanged || st.active != status.Active ||
		!ptr.Equal(&st.ready, status.Ready) || !ptr.Equal(&st.terminating, status.Terminating)
	status.Active = st.active
	status.Ready = ptr.To(st.ready)
	status.Terminating = ptr.To(st.terminating)
	if err := c.trackStatus(ctx, st, needsFlush); err != nil {
		return action, fmt.Errorf("tracking status: %w", err)
	}
	return action, manageErr
}

// newState counts the Job's pods and sets status.startTime on its first
// unsuspended sync.
func (c *Controller) newState(logger klog.Logger, key string, job *batch.Job, pods []*v1.Pod) *syncState {
	uncounted := job.Status.UncountedTerminatedPods
	st := &syncState{
		key:                  key,
		job:                  job,
		pods:                 pods,
		activePods:           filterPods(pods, isActive),
		terminating:          countPods(pods, isTerminating),
		expectedRmFinalizers: c.finalizers.expected(key),
		uncountedSucceeded:   sets.New(uncounted.Succeeded...),
		uncountedFailed:      sets.New(uncounted.Failed...),
	}
	st.active = int32(len(st.activePods))
	st.ready = countPods(st.activePods, podranking.IsReady)
	newSucceeded, newFailed := st.newlyFinished()
	st.succeeded = job.Status.Succeeded + int32(len(newSucceeded)+len(uncounted.Succeeded))
	counted := 0
	for _, p := range newFailed {
		if matchFailurePolicy(job.Spec.PodFailurePolicy, p).count {
			counted++
		}
	}
	st.failed = job.Status.Failed + int32(counted+len(uncounted.Failed))
	if job.Status.StartTime == nil && !isSuspended(job) {
		job.Status.StartTime = ptr.To(metav1.NewTime(c.clock.Now()))
	}
	st.newBackoff = c.backoff.next(key, newSucceeded, newFailed)
	return st
}

// newlyFinished returns the succeeded and failed pods not counted yet:
// holding the finalizer, not in uncountedTerminatedPods, not expected to
// lose the finalizer, and for Indexed Jobs with a valid index.
func (st *syncState) newlyFinished() (succeeded, failed []*v1.Pod) {
	for _, p := range st.pods {
		if !hasTrackingFinalizer(p) || st.expectedRmFinalizers.Has(p.UID) {
			continue
		}
		if isIndexed(st.job) && validIndex(p, *st.job.Spec.Completions) == noIndex {
			continue
		}
		switch {
		case p.Status.Phase == v1.PodSucceeded && !st.uncountedSucceeded.Has(p.UID):
			succeeded = append(succeeded, p)
		case isPodFailed(p, st.job) && !st.uncountedFailed.Has(p.UID):
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

// podsForJob returns the Job's pods: its own that match its selector and
// orphans it adopted (with the tracking finalizer), after releasing those
// it no longer selects. They are the cache's, but for adopted ones, which
// are copies showing the finalizer.
func (c *Controller) podsForJob(ctx context.Context, job *batch.Job) ([]*v1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, controller.Permanent(fmt.Errorf("couldn't convert Job selector: %w", err))
	}
	candidates, err := controllerref.PodsByOwner(c.podIndexer, job, jobKind.Kind, true)
	if err != nil {
		return nil, err
	}
	canAdopt := controllerref.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if fresh.UID != job.UID {
			return nil, fmt.Errorf("original Job %v/%v is gone: got uid %v, wanted %v", job.Namespace, job.Name, fresh.UID, job.UID)
		}
		return fresh, nil
	})
	m := controllerref.NewPodManager(c.podControl.PatchPod, job, jobKind, selector, canAdopt, batch.JobTrackingFinalizer)
	pods, err := m.Claim(ctx, candidates)
	if err != nil {
		return pods, err
	}
	for i, p := range pods {
		if !hasOwner(p, job.UID) && !hasTrackingFinalizer(p) {
			adopted := p.DeepCopy()
			adopted.Finalizers = append(adopted.Finalizers, batch.JobTrackingFinalizer)
			pods[i] = adopted
		}
	}
	return pods, nil
}

func hasOwner(p *v1.Pod, uid types.UID) bool {
	for _, r := range p.OwnerReferences {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func isSuspended(job *batch.Job) bool { return ptr.Deref(job.Spec.Suspend, false) }

// completed reports whether the Job reached its completions with nothing
// active, or, without completions, had a pod succeed and nothing is
// active any more.
func completed(st *syncState) bool {
	if st.active != 0 {
		return false
	}
	if c := st.job.Spec.Completions; c != nil {
		return st.succeeded >= *c
	}
	return st.succeeded > 0
}

// setSuspended keeps the Suspended condition in line with spec.suspend and
// reports whether it changed. Suspending may reset startTime; resuming
// always restarts it, so that activeDeadlineSeconds counts time active.
func (c *Controller) setSuspended(st *syncState) bool {
	job := st.job
	now := c.clock.Now()
	var changed bool
	if isSuspended(job) {
		job.Status.Conditions, changed = setCondition(job.Status.Conditions, batch.JobSuspended, v1.ConditionTrue, reasonSuspended, msgSuspended, now)
		if changed {
			c.recorder.Event(job, v1.EventTypeNormal, "Suspended", msgSuspended)
			if c.resetStartOnSuspend {
				job.Status.StartTime = nil
			}
		}
		return changed
	}
	job.Status.Conditions, changed = setCondition(job.Status.Conditions, batch.JobSuspended, v1.ConditionFalse, reasonResumed, msgResumed, now)
	if changed {
		c.recorder.Event(job, v1.EventTypeNormal, "Resumed", msgResumed)
		job.Status.StartTime = ptr.To(metav1.NewTime(now))
	}
	return changed
}
