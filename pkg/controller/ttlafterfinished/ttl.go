package ttlafterfinished

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// needsCleanup reports whether a Job has finished and sets a TTL.
func needsCleanup(j *batchv1.Job) bool {
	return j.Spec.TTLSecondsAfterFinished != nil && isFinished(j)
}

func isFinished(j *batchv1.Job) bool {
	_, ok := finishedCondition(j)
	return ok
}

// finishedCondition returns the first True Complete or Failed condition.
func finishedCondition(j *batchv1.Job) (batchv1.JobCondition, bool) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			return c, true
		}
	}
	return batchv1.JobCondition{}, false
}

// expiry returns when a Job that needs cleanup finished and when its TTL
// expires. It fails for a Job that does not need cleanup or whose finished
// condition lacks a transition time.
func expiry(j *batchv1.Job) (finishedAt, expiresAt time.Time, err error) {
	if !needsCleanup(j) {
		return time.Time{}, time.Time{}, fmt.Errorf("job %s/%s should not be cleaned up", j.Namespace, j.Name)
	}
	c, _ := finishedCondition(j)
	if c.LastTransitionTime.IsZero() {
		return time.Time{}, time.Time{}, fmt.Errorf("unable to find the time when the Job %s/%s finished", j.Namespace, j.Name)
	}
	finishedAt = c.LastTransitionTime.Time
	return finishedAt, finishedAt.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second), nil
}
