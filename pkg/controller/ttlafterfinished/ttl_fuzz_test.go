package ttlafterfinished

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzExpiry checks when a finished Job's TTL runs out: only a Job with a
// TTL and a True Complete or Failed condition with a transition time has
// one; it finished at the first such condition's time, and expires exactly
// ttlSecondsAfterFinished seconds later, for every int32 TTL (no overflow).
func FuzzExpiry(f *testing.F) {
	f.Add(int32(0), true, uint8(0), true, int64(1782907200), int64(1782907300))
	f.Add(int32(100), true, uint8(1), true, int64(1782907200), int64(0))
	f.Add(int32(2147483647), true, uint8(0), false, int64(1782907200), int64(1))
	f.Add(int32(-2147483648), true, uint8(5), true, int64(253402300799), int64(-62135596800))
	f.Add(int32(10), false, uint8(0), true, int64(1), int64(2))
	f.Add(int32(10), true, uint8(2), true, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, ttl int32, hasTTL bool, kinds uint8, true0 bool, t0, t1 int64) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
		if hasTTL {
			job.Spec.TTLSecondsAfterFinished = &ttl
		}
		types := []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuspended, batchv1.JobFailureTarget}
		statuses := []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}
		for i, sec := range []int64{t0, t1} {
			c := batchv1.JobCondition{Type: types[int(kinds>>(2*i))%len(types)], Status: statuses[int(kinds>>(4+i))%2]}
			if i == 0 && !true0 {
				c.Status = v1.ConditionUnknown
			}
			if sec != 0 {
				c.LastTransitionTime = metav1.NewTime(time.Unix(sec, 0))
			}
			job.Status.Conditions = append(job.Status.Conditions, c)
		}

		finishedAt, expiresAt, err := expiry(job)
		var first *batchv1.JobCondition
		for i := range job.Status.Conditions {
			c := &job.Status.Conditions[i]
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
				first = c
				break
			}
		}
		if !hasTTL || first == nil || first.LastTransitionTime.IsZero() {
			if err == nil {
				t.Fatalf("expiry of %+v: no error", job.Status.Conditions)
			}
			return
		}
		if err != nil {
			t.Fatalf("expiry of %+v: %v", job.Status.Conditions, err)
		}
		if !finishedAt.Equal(first.LastTransitionTime.Time) {
			t.Fatalf("finished at %v, want %v", finishedAt, first.LastTransitionTime)
		}
		if d := expiresAt.Unix() - finishedAt.Unix(); d != int64(ttl) {
			t.Fatalf("TTL %d: expires %ds after finishing", ttl, d)
		}
	})
}
