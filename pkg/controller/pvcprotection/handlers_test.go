package pvcprotection

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
)

func TestPodEventsQueueClaims(t *testing.T) {
	tests := []struct {
		name    string
		unused  bool
		pod     *v1.Pod
		deleted bool
		want    int
	}{
		{name: "running scheduled pod ignored without the Unused condition", pod: pod("p", usesClaim("a"))},
		{name: "running scheduled pod queued with the Unused condition", unused: true, pod: pod("p", usesClaim("a")), want: 1},
		{name: "deleted pod", pod: pod("p", usesClaim("a"), ephemeralVol("x")), deleted: true, want: 2},
		{name: "terminated pod", pod: pod("p", succeeded, usesClaim("a")), want: 1},
		{name: "unscheduled pod", pod: pod("p", unscheduled, usesClaim("a")), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.unused, nil, nil, nil)
			logger, _ := ktesting.NewTestContext(t)
			f.c.podChanged(logger, nil, tt.pod, tt.deleted)
			if n := f.c.queue.Len(); n != tt.want {
				t.Errorf("%d keys queued, want %d", n, tt.want)
			}
		})
	}
}

func TestReplacedPodQueuesOldClaims(t *testing.T) {
	f := newFixture(t, false, nil, nil, nil)
	logger, _ := ktesting.NewTestContext(t)
	old := pod("p", usesClaim("old"))
	replacement := pod("p", usesClaim("new"))
	replacement.UID = "other"
	f.c.podChanged(logger, old, replacement, false)
	if n := f.c.queue.Len(); n != 1 {
		t.Fatalf("%d keys queued, want 1", n)
	}
	if k, _ := f.c.queue.Get(); k != ns+"/old" {
		t.Errorf("queued %q, want the old pod's claim", k)
	}
}

func TestClaimEventsQueueClaims(t *testing.T) {
	f := newFixture(t, true, nil, nil, nil)
	logger, _ := ktesting.NewTestContext(t)
	// Finalizer work is queued at once.
	f.c.pvcChanged(logger, claim("deleting", deleting, bound))
	f.c.pvcChanged(logger, claim("unprotected", noFinalizer))
	// Nothing to do for a pending claim or one with its condition.
	f.c.pvcChanged(logger, claim("pending"))
	f.c.pvcChanged(logger, claim("done", bound, unusedCond(v1.ConditionTrue)))
	if n := f.c.queue.Len(); n != 2 {
		t.Fatalf("%d keys queued at once, want the 2 with finalizer work", n)
	}
	// Bound claims without the condition wait for the end of the window,
	// together.
	f.c.pvcChanged(logger, claim("b1", bound))
	f.c.pvcChanged(logger, claim("b2", bound))
	if n := f.c.queue.Len(); n != 2 {
		t.Fatalf("%d keys queued, want the bound claims held back", n)
	}
	deadline := time.Now().Add(unusedWindow + 5*time.Second)
	for f.c.queue.Len() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d keys queued after the window, want 4", f.c.queue.Len())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var got []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		got = append(got, k)
		f.c.queue.Done(k)
	}
	if want := []string{ns + "/deleting", ns + "/unprotected", ns + "/b1", ns + "/b2"}; !slices.Equal(got, want) {
		t.Errorf("queued %v, want %v", got, want)
	}
}
