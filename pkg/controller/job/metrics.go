package job

import (
	"sync"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Upstream's job_controller metrics, with their names, labels and
// stability levels.
const metricsSubsystem = "job_controller"

// Label values.
const (
	actionReconciling = "reconciling"
	actionTracking    = "tracking"
	actionPodsCreated = "pods_created"
	actionPodsDeleted = "pods_deleted"

	resultSucceeded = "succeeded"
	resultFailed    = "failed"

	reasonNew                 = "new"
	reasonRecreateTermOrFail  = "recreate_terminating_or_failed"
	reasonRecreateFailed      = "recreate_failed"
	finalizerEventAdd         = "add"
	finalizerEventDelete      = "delete"
	backoffLimitLabelGlobal   = "global"
	backoffLimitLabelPerIndex = "perIndex"
)

var (
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "job_sync_duration_seconds",
		Help:           "The time it took to sync a job",
		StabilityLevel: metrics.STABLE,
		Buckets:        metrics.ExponentialBuckets(0.004, 2, 15),
	}, []string{"completion_mode", "result", "action"})
	syncTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "job_syncs_total",
		Help:           "The number of job syncs",
		StabilityLevel: metrics.STABLE,
	}, []string{"completion_mode", "result", "action"})
	jobsFinished = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "jobs_finished_total",
		Help:           "The number of finished jobs",
		StabilityLevel: metrics.STABLE,
	}, []string{"completion_mode", "result", "reason"})
	jobsByExternalController = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "jobs_by_external_controller_total",
		Help:           "The number of Jobs managed by an external controller",
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller_name"})
	podsFinished = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "job_pods_finished_total",
		Help:           "The number of finished Pods that are fully tracked",
		StabilityLevel: metrics.STABLE,
	}, []string{"completion_mode", "result"})
	failuresByPolicy = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem,
		Name:      "pod_failures_handled_by_failure_policy_total",
		Help: `The number of failed Pods handled by failure policy with
			respect to the failure policy action applied based on the matched
			rule. Possible values of the action label correspond to the
			possible values for the failure policy rule action, which are:
			"FailJob", "Ignore" and "Count".`,
		StabilityLevel: metrics.BETA,
	}, []string{"action"})
	terminatedWithFinalizer = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem,
		Name:      "terminated_pods_tracking_finalizer_total",
		Help: `The number of terminated pods (phase=Failed|Succeeded)
that have the finalizer batch.kubernetes.io/job-tracking
The event label can be "add" or "delete".`,
		StabilityLevel: metrics.BETA,
	}, []string{"event"})
	finishedIndexes = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem,
		Name:      "job_finished_indexes_total",
		Help: `The number of finished indexes. Possible values for the
			status label are: "succeeded", "failed". Possible values for the
			backoffLimit label are: "perIndex" and "global"`,
	}, []string{"status", "backoffLimit"})
	podsCreated = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem,
		Name:      "job_pods_creation_total",
		Help: `The number of Pods created by the Job controller labelled with a reason for the Pod creation.
This metric also distinguishes between Pods created using different PodReplacementPolicy settings.
Possible values of the "reason" label are:
"new", "recreate_terminating_or_failed", "recreate_failed".
Possible values of the "status" label are:
"succeeded", "failed".`,
	}, []string{"reason", "status"})
	staleSyncSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "stale_sync_skips_total",
		Help:           "Total number of Job syncs skipped due to a stale watch cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "resource"})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(syncDuration, syncTotal, jobsFinished, podsFinished, failuresByPolicy,
			terminatedWithFinalizer, finishedIndexes, podsCreated, jobsByExternalController, staleSyncSkips)
	})
}

// observeTrackingFinalizer counts a pod starting or ceasing to be
// terminated with the tracking finalizer (nil: no pod).
func observeTrackingFinalizer(oldPod, newPod *v1.Pod) {
	was, is := terminatedWithTrackingFinalizer(oldPod), terminatedWithTrackingFinalizer(newPod)
	switch {
	case is && !was:
		terminatedWithFinalizer.WithLabelValues(finalizerEventAdd).Inc()
	case was && !is:
		terminatedWithFinalizer.WithLabelValues(finalizerEventDelete).Inc()
	}
}

func terminatedWithTrackingFinalizer(p *v1.Pod) bool {
	return p != nil && (p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded) && hasTrackingFinalizer(p)
}

// observePodsFinished counts the pods (and, for Indexed Jobs, indexes)
// that status moved to the counters since old.
func observePodsFinished(logger klog.Logger, job *batch.Job, old *batch.JobStatus) {
	mode := completionMode(job)
	succeeded := int(job.Status.Succeeded) - int(old.Succeeded)
	if isIndexed(job) {
		completions := int(*job.Spec.Completions)
		count := func(s *string) int {
			if s == nil {
				return 0
			}
			return parseIntervals(logger, *s, completions).total()
		}
		succeeded = 0
		if job.Status.CompletedIndexes != old.CompletedIndexes {
			succeeded = count(&job.Status.CompletedIndexes) - count(&old.CompletedIndexes)
		}
		label := backoffLimitLabelGlobal
		if hasBackoffLimitPerIndex(job) {
			label = backoffLimitLabelPerIndex
		}
		finishedIndexes.WithLabelValues(resultSucceeded, label).Add(float64(succeeded))
		if hasBackoffLimitPerIndex(job) && !ptr.Equal(job.Status.FailedIndexes, old.FailedIndexes) {
			if d := count(job.Status.FailedIndexes) - count(old.FailedIndexes); d > 0 {
				finishedIndexes.WithLabelValues(resultFailed, label).Add(float64(d))
			}
		}
	}
	podsFinished.WithLabelValues(mode, resultSucceeded).Add(float64(succeeded))
	podsFinished.WithLabelValues(mode, resultFailed).Add(float64(job.Status.Failed - old.Failed))
}

// observeCreations counts pod creations by why they were needed.
func observeCreations(job *batch.Job, st *syncState, succeeded, failed int32) {
	reason := reasonNew
	switch {
	case onlyReplaceFailedPods(job) && st.failed > 0:
		reason = reasonRecreateFailed
	case st.failed > 0 || st.terminating > 0:
		reason = reasonRecreateTermOrFail
	}
	if succeeded > 0 {
		podsCreated.WithLabelValues(reason, resultSucceeded).Add(float64(succeeded))
	}
	if failed > 0 {
		podsCreated.WithLabelValues(reason, resultFailed).Add(float64(failed))
	}
}
