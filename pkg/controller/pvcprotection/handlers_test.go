package pvcprotection

import (
	"testing"

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
