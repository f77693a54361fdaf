package job

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func finishedAt(d time.Duration) podOpt {
	return func(p *v1.Pod) {
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(d))}}}}
	}
}

func TestBackoffRemaining(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	last := t0.Add(-3 * time.Second)
	for failures, want := range map[int32]time.Duration{
		0: 0, 1: 7 * time.Second, 2: 17 * time.Second, 3: 37 * time.Second, 6: 317 * time.Second,
		7: 10*time.Minute - 3*time.Second, 30: 10*time.Minute - 3*time.Second,
	} {
		if got := backoffRemaining(clk, failures, &last); got != want {
			t.Errorf("%d failures: %v, want %v", failures, got, want)
		}
	}
	old := t0.Add(-time.Hour)
	if got := backoffRemaining(clk, 3, &old); got != 0 {
		t.Errorf("long past: %v", got)
	}
}

func TestBackoffRecord(t *testing.T) {
	job := newJob(1, 5)
	s := newBackoffStore()
	fail := func(name string, d time.Duration) *v1.Pod {
		return newPod(job, name, podPhase(v1.PodFailed), finishedAt(d))
	}
	ok := func(name string, d time.Duration) *v1.Pod {
		return newPod(job, name, podPhase(v1.PodSucceeded), finishedAt(d))
	}

	r := s.next("ns/pi", nil, []*v1.Pod{fail("a", -5*time.Second), fail("b", -9*time.Second)})
	if r.failuresAfterLastSuccess != 2 || !r.lastFailureTime.Equal(t0.Add(-5*time.Second)) {
		t.Fatalf("two failures: %+v", r)
	}
	s.update(r)
	// A success before the newest failure keeps the failures after it.
	r = s.next("ns/pi", []*v1.Pod{ok("c", -4*time.Second)}, []*v1.Pod{fail("d", -3*time.Second), fail("e", -6*time.Second)})
	if r.failuresAfterLastSuccess != 1 || !r.lastFailureTime.Equal(t0.Add(-3*time.Second)) {
		t.Fatalf("after a success: %+v", r)
	}
	s.update(r)
	r = s.next("ns/pi", []*v1.Pod{ok("f", -time.Second)}, nil)
	if r.failuresAfterLastSuccess != 0 || r.lastFailureTime != nil {
		t.Fatalf("success resets: %+v", r)
	}
	s.remove("ns/pi")
	if r := s.next("ns/pi", nil, nil); r.failuresAfterLastSuccess != 0 {
		t.Fatalf("removed: %+v", r)
	}
}

func TestIndexBackoff(t *testing.T) {
	job := newJob(1, 5, indexed)
	clk := testingclock.NewFakeClock(t0)
	logger := klog.Background()
	if d := indexBackoffRemaining(logger, clk, nil); d != 0 {
		t.Errorf("no failed pod: %v", d)
	}
	p := newPod(job, "a", podPhase(v1.PodFailed), finishedAt(-time.Second), withAnnotation("batch.kubernetes.io/job-index-failure-count", "1"),
		withAnnotation("batch.kubernetes.io/job-index-ignored-failure-count", "1"))
	// Three failures in all: 40s after the last.
	if d := indexBackoffRemaining(logger, clk, p); d != 39*time.Second {
		t.Errorf("remaining = %v, want 39s", d)
	}
}

func TestFinishedTime(t *testing.T) {
	job := newJob(1, 1)
	ready := func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0.Add(-2 * time.Second))}}
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want time.Time
	}{
		{"containers", newPod(job, "a", finishedAt(-time.Second), ready), t0.Add(-time.Second)},
		{"ready condition", newPod(job, "a", ready), t0.Add(-2 * time.Second)},
		{"deletion", newPod(job, "a", deleting, func(p *v1.Pod) { p.DeletionGracePeriodSeconds = ptr.To[int64](30) }), t0.Add(-30 * time.Second)},
		{"creation", newPod(job, "a"), t0.Add(-time.Hour)},
	}
	for _, tc := range tests {
		if got := finishedTime(tc.pod); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
