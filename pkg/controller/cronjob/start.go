package cronjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// startDue creates the Job of the most recent unmet scheduled time, if
// the CronJob may run one now, and returns when to sync it next (nil: not
// until it changes). A CronJob that cannot run (unknown time zone,
// suspended, a schedule that does not parse or never fires) is not
// requeued; a change to it enqueues it.
func (c *Controller) startDue(ctx context.Context, s *syncState, now time.Time) (*time.Duration, error) {
	logger := klog.FromContext(ctx)
	cj := s.cj
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			logger.V(4).Info("Not starting job because timeZone is invalid", "cronjob", klog.KObj(cj), "timeZone", *tz, "err", err)
			c.recorder.Eventf(cj, v1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *tz, err)
			return nil, nil
		}
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		logger.V(4).Info("Not starting job because the cron is suspended", "cronjob", klog.KObj(cj))
		return nil, nil
	}
	sched, err := parseSchedule(scheduleSpec(cj, c.recorder))
	if err != nil {
		logger.V(2).Info("Unparseable schedule", "cronjob", klog.KObj(cj), "schedule", cj.Spec.Schedule, "err", err)
		c.recorder.Eventf(cj, v1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, nil
	}
	scheduled, err := nextUnmet(logger, cj, now, sched, c.recorder)
	if err != nil {
		logger.V(2).Info("Invalid schedule", "cronjob", klog.KObj(cj), "schedule", cj.Spec.Schedule, "err", err)
		c.recorder.Eventf(cj, v1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, nil
	}
	next := func() (*time.Duration, error) {
		d := requeueAfter(s.cj, now, sched)
		return &d, nil
	}
	if scheduled == nil {
		logger.V(4).Info("No unmet start times", "cronjob", klog.KObj(cj))
		return next()
	}
	if !c.mayStart(logger, cj, *scheduled, now) {
		return next()
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		if err := c.replaceActive(ctx, s); err != nil {
			return nil, err
		}
	}
	started, err := c.createJob(ctx, s, *scheduled)
	if err != nil || !started {
		return nil, err
	}
	return next()
}

// mayStart applies startingDeadlineSeconds (MissSchedule), skips a time
// already started, and applies concurrencyPolicy Forbid
// (JobAlreadyActive).
func (c *Controller) mayStart(logger klog.Logger, cj *batchv1.CronJob, scheduled, now time.Time) bool {
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		logger.V(4).Info("Missed starting window", "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, v1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return false
	}
	if isActiveName(cj, jobName(cj, scheduled)) || cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: scheduled}) {
		logger.V(4).Info("Not starting job because the scheduled time is already processed", "cronjob", klog.KObj(cj), "schedule", scheduled)
		return false
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		logger.V(4).Info("Not starting job because prior execution is still running and concurrency policy is Forbid", "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, v1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return false
	}
	return true
}

// replaceActive deletes every active Job, read afresh, for
// concurrencyPolicy Replace.
func (c *Controller) replaceActive(ctx context.Context, s *syncState) error {
	logger := klog.FromContext(ctx)
	for _, r := range s.cj.Status.Active {
		logger.V(4).Info("Deleting job that was still running at next scheduled start time", "job", klog.KRef(r.Namespace, r.Name))
		job, err := c.client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			c.recorder.Eventf(s.cj, v1.EventTypeWarning, "FailedGet", "Get job: %v", err)
			return err
		}
		if !c.deleteJobOf(ctx, s.cj, job) {
			return fmt.Errorf("could not replace job %s/%s", job.Namespace, job.Name)
		}
		s.changed = true
	}
	return nil
}

// createJob creates the Job for the scheduled time and lists it as
// active with the time as lastScheduleTime. A Job of that name the
// CronJob already controls (created by an earlier sync whose status write
// was lost) is listed instead; one it does not control is left alone. It
// reports whether the Job is now listed.
func (c *Controller) createJob(ctx context.Context, s *syncState, scheduled time.Time) (bool, error) {
	logger := klog.FromContext(ctx)
	cj := s.cj
	req, err := newJob(cj, scheduled)
	if err != nil {
		logger.Error(err, "Unable to make Job from template", "cronjob", klog.KObj(cj))
		return false, err
	}
	job, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
		return false, err
	case apierrors.IsAlreadyExists(err):
		job, err = c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !metav1.IsControlledBy(job, cj) || isActive(cj, job.UID) {
			return false, nil
		}
		logger.Info("Job already exists", "cronjob", klog.KObj(cj), "job", klog.KObj(req))
	case err != nil:
		c.recorder.Eventf(cj, v1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return false, err
	default:
		jobCreationSkew.Observe(job.CreationTimestamp.Sub(scheduled).Seconds())
		logger.V(4).Info("Created Job", "job", klog.KObj(job), "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, v1.EventTypeNormal, "SuccessfulCreate", "Created job %v", job.Name)
	}

	ref, err := jobRef(job)
	if err != nil {
		logger.V(2).Info("Unable to make object reference", "cronjob", klog.KObj(cj), "err", err)
		return false, fmt.Errorf("unable to make object reference for job for %s", klog.KObj(cj))
	}
	cj.Status.Active = append(cj.Status.Active, *ref)
	cj.Status.LastScheduleTime = &metav1.Time{Time: scheduled}
	s.changed = true
	return true, nil
}
