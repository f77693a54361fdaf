package job

import (
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition messages, upstream's. Reasons are batch.JobReason*, besides
// the Suspended condition's.
const (
	msgBackoffLimitExceeded     = "Job has reached the specified backoff limit"
	msgDeadlineExceeded         = "Job was active longer than specified deadline"
	msgMaxFailedIndexesExceeded = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes            = "Job has failed indexes"
	msgCompletionsReached       = "Reached expected number of succeeded pods"

	reasonSuspended = "JobSuspended"
	msgSuspended    = "Job suspended"
	reasonResumed   = "JobResumed"
	msgResumed      = "Job resumed"
)

func newCondition(t batch.JobConditionType, status v1.ConditionStatus, reason, message string, now time.Time) *batch.JobCondition {
	return &batch.JobCondition{
		Type:               t,
		Status:             status,
		LastProbeTime:      metav1.NewTime(now),
		LastTransitionTime: metav1.NewTime(now),
		Reason:             reason,
		Message:            message,
	}
}

func findCondition(list []batch.JobCondition, t batch.JobConditionType) *batch.JobCondition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}

// trueCondition returns the condition of type t if it is True.
func trueCondition(job *batch.Job, t batch.JobConditionType) *batch.JobCondition {
	if c := findCondition(job.Status.Conditions, t); c != nil && c.Status == v1.ConditionTrue {
		return c
	}
	return nil
}

// isFinished reports whether the Job has a True Complete or Failed
// condition.
func isFinished(job *batch.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batch.JobComplete || c.Type == batch.JobFailed) && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func isSuccessCriteriaMet(c *batch.JobCondition) bool {
	return c != nil && c.Type == batch.JobSuccessCriteriaMet && c.Status == v1.ConditionTrue
}

// setCondition updates the condition of type t in place, or appends it
// unless its status is False (nothing to False means nothing), and reports
// whether the list changed. An update is a new condition, times included.
func setCondition(list []batch.JobCondition, t batch.JobConditionType, status v1.ConditionStatus, reason, message string, now time.Time) ([]batch.JobCondition, bool) {
	if c := findCondition(list, t); c != nil {
		if c.Status == status && c.Reason == reason && c.Message == message {
			return list, false
		}
		*c = *newCondition(t, status, reason, message, now)
		return list, true
	}
	if status == v1.ConditionFalse {
		return list, false
	}
	return append(list, *newCondition(t, status, reason, message, now)), true
}

// finalCondition is the condition that replaces an interim one once the
// Job's pods are all counted: Failed for FailureTarget, Complete for
// SuccessCriteriaMet, with the interim one's reason and message.
func finalCondition(interim *batch.JobCondition, now time.Time) *batch.JobCondition {
	t := batch.JobFailed
	if interim.Type == batch.JobSuccessCriteriaMet {
		t = batch.JobComplete
	}
	return newCondition(t, v1.ConditionTrue, interim.Reason, interim.Message, now)
}
