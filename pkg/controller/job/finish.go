package job

import (
	"context"
	"sync"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// defaultBackoffLimit is spec.backoffLimit's default, should the API server
// not have set it.
const defaultBackoffLimit = 6

// decideEnd sets st.finished to the end the Job has reached before pods are
// managed, checking in upstream's order: an earlier SuccessCriteriaMet or
// FailureTarget (which becomes Failed), a FailJob rule, the backoff limit,
// the active deadline, failed indexes, the success policy. When the
// deadline lies ahead, the Job is requeued for it. For Indexed Jobs it
// also computes the succeeded and failed indexes.
func (c *Controller) decideEnd(logger klog.Logger, st *syncState) {
	job := st.job
	now := c.clock.Now()
	failure := func(reason, message string) *batch.JobCondition {
		return newCondition(batch.JobFailureTarget, v1.ConditionTrue, reason, message, now)
	}
	// An earlier sync's SuccessCriteriaMet stands: the failure policy is
	// not evaluated against it.
	st.finished = trueCondition(job, batch.JobSuccessCriteriaMet)
	if st.finished == nil {
		if target := trueCondition(job, batch.JobFailureTarget); target != nil {
			st.finished = finalCondition(target, now)
		} else if msg := failJobMessage(job, st.pods); msg != nil {
			st.finished = failure(batch.JobReasonPodFailurePolicy, *msg)
		}
	}
	if st.finished == nil {
		switch {
		case st.failed > ptr.Deref(job.Spec.BackoffLimit, defaultBackoffLimit) || pastBackoffLimitOnFailure(job, st.pods):
			st.finished = failure(batch.JobReasonBackoffLimitExceeded, msgBackoffLimitExceeded)
		case c.pastActiveDeadline(job):
			st.finished = failure(batch.JobReasonDeadlineExceeded, msgDeadlineExceeded)
		case job.Spec.ActiveDeadlineSeconds != nil && !isSuspended(job) && job.Status.StartTime != nil:
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - c.clock.Since(job.Status.StartTime.Time)
			logger.V(2).Info("Job has activeDeadlineSeconds configuration. Will sync this job again", "key", st.key, "nextSyncIn", left)
			c.queue.AddAfter(st.key, left)
		}
	}
	if !isIndexed(job) {
		return
	}
	completions := *job.Spec.Completions
	st.prevSucceededIndexes, st.succeededIndexes = succeededIndexes(logger, job, st.pods)
	st.succeeded = int32(st.succeededIndexes.total())
	if hasBackoffLimitPerIndex(job) {
		st.failedIndexes = failedIndexes(logger, job, st.pods)
		if st.finished == nil {
			failed := st.failedIndexes.total()
			switch {
			case job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes):
				st.finished = failure(batch.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexesExceeded)
			case failed > 0 && failed+st.succeededIndexes.total() >= int(completions):
				st.finished = failure(batch.JobReasonFailedIndexes, msgFailedIndexes)
			}
		}
		st.delayedDeletion = podsWithDelayedDeletion(logger, st)
	}
	if st.finished == nil {
		if msg, met := matchSuccessPolicy(logger, job.Spec.SuccessPolicy, completions, st.succeededIndexes); met {
			st.finished = newCondition(batch.JobSuccessCriteriaMet, v1.ConditionTrue, batch.JobReasonSuccessPolicy, msg, now)
		}
	}
}

// pastBackoffLimitOnFailure reports, for restartPolicy OnFailure, whether
// the container restarts of pending and running pods reached the backoff
// limit (any restart, with a limit of 0).
func pastBackoffLimitOnFailure(job *batch.Job, pods []*v1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
			continue
		}
		for _, s := range p.Status.InitContainerStatuses {
			restarts += s.RestartCount
		}
		for _, s := range p.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
	}
	limit := ptr.Deref(job.Spec.BackoffLimit, defaultBackoffLimit)
	if limit == 0 {
		return restarts > 0
	}
	return restarts >= limit
}

// pastActiveDeadline reports whether an unsuspended Job has been active
// for activeDeadlineSeconds.
func (c *Controller) pastActiveDeadline(job *batch.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || isSuspended(job) {
		return false
	}
	return c.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// deleteActivePods deletes the active pods of a Job that reached its end,
// keeping their finalizers (the tracking removes them once they are
// counted). The end is declared only once every active pod is being
// deleted and no creation or deletion is still expected.
func (c *Controller) deleteActivePods(ctx context.Context, st *syncState, satisfied bool) error {
	job := st.job
	var mu sync.Mutex
	var deleted, deletedReady int32
	var firstErr error
	var wg sync.WaitGroup
	for _, pod := range st.activePods {
		wg.Go(func() {
			err := c.podControl.DeletePod(ctx, job.Namespace, pod.Name, job)
			if err != nil && !apierrors.IsNotFound(err) {
				utilruntime.HandleErrorWithContext(ctx, err, "Deleting the active pod of a finished Job", "pod", klog.KObj(pod))
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			mu.Lock()
			deleted++
			if podranking.IsReady(pod) {
				deletedReady++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if deleted != st.active || !satisfied {
		// Pods may remain, or appear once the cache catches up.
		st.finished = nil
	}
	st.active -= deleted
	st.terminating += deleted
	st.ready -= deletedReady
	return firstErr
}
