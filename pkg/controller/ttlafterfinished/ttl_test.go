package ttlafterfinished

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type jobOpt func(*batchv1.Job)

func job(name string, opts ...jobOpt) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	for _, o := range opts {
		o(j)
	}
	return j
}

func ttl(s int32) jobOpt { return func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = ptr.To(s) } }

func finished(t batchv1.JobConditionType, at time.Time) jobOpt {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)})
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name        string
		job         *batchv1.Job
		wantExpires time.Time
		wantErr     bool
	}{
		{name: "complete", job: job("a", ttl(10), finished(batchv1.JobComplete, t0)), wantExpires: t0.Add(10 * time.Second)},
		{name: "failed, zero ttl", job: job("a", ttl(0), finished(batchv1.JobFailed, t0)), wantExpires: t0},
		{name: "first finished condition wins", job: job("a", ttl(5),
			func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: v1.ConditionFalse}}
			},
			finished(batchv1.JobFailed, t0), finished(batchv1.JobComplete, t0.Add(time.Hour))), wantExpires: t0.Add(5 * time.Second)},
		{name: "no ttl", job: job("a", finished(batchv1.JobComplete, t0)), wantErr: true},
		{name: "not finished", job: job("a", ttl(5)), wantErr: true},
		{name: "no transition time", job: job("a", ttl(5), finished(batchv1.JobComplete, time.Time{})), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := expiry(tc.job)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !got.Equal(tc.wantExpires) {
				t.Errorf("expires at %v, want %v", got, tc.wantExpires)
			}
		})
	}
}
