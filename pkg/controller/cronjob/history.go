package cronjob

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// cleanupHistory deletes the finished Jobs beyond the CronJob's history
// limits, oldest start first, each kind (succeeded, failed) against its
// own limit; an unset limit keeps every Job of its kind. It reports
// whether any Job was deleted, which (as upstream) asks for a status
// write.
func (c *Controller) cleanupHistory(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var complete, failed []*batchv1.Job
	for _, j := range jobs {
		switch finishedType(j) {
		case batchv1.JobComplete:
			complete = append(complete, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	deleted := false
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil && c.removeOldest(ctx, cj, complete, *l) {
		deleted = true
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil && c.removeOldest(ctx, cj, failed, *l) {
		deleted = true
	}
	return deleted
}

// removeOldest deletes all but the newest keep Jobs of jobs.
func (c *Controller) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int32) bool {
	excess := len(jobs) - int(keep)
	if excess <= 0 {
		return false
	}
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Cleaning up jobs from CronJob list", "deletejobnum", excess, "jobnum", len(jobs), "cronjob", klog.KObj(cj))
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, olderFirst)
	deleted := false
	for _, j := range jobs[:excess] {
		logger.V(4).Info("Removing job from CronJob list", "job", j.Name, "cronjob", klog.KObj(cj))
		if c.deleteJobOf(ctx, cj, j) {
			deleted = true
		}
	}
	return deleted
}

// deleteJobOf deletes a Job of the CronJob in the background (the garbage
// collector removes its pods) and drops it from the active list. A failure
// is recorded as an Event and logged, not retried here.
func (c *Controller) deleteJobOf(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	background := metav1.DeletePropagationBackground
	err := c.client.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		klog.FromContext(ctx).Error(err, "Error deleting job from cronjob", "job", klog.KObj(j), "cronjob", klog.KObj(cj))
		return false
	}
	removeActive(cj, j.UID)
	c.recorder.Eventf(cj, v1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}
