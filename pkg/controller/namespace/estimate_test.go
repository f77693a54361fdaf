package namespace

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestPodsEstimate(t *testing.T) {
	pod := func(phase v1.PodPhase, grace *int64) v1.Pod {
		return v1.Pod{Spec: v1.PodSpec{TerminationGracePeriodSeconds: grace}, Status: v1.PodStatus{Phase: phase}}
	}
	for _, tc := range []struct {
		name string
		pods []v1.Pod
		want int64
	}{
		{"none", nil, 0},
		{"longest grace wins", []v1.Pod{pod(v1.PodRunning, ptr.To[int64](10)), pod(v1.PodPending, ptr.To[int64](40)), pod("", nil)}, 40},
		{"finished pods do not count", []v1.Pod{pod(v1.PodSucceeded, ptr.To[int64](90)), pod(v1.PodFailed, ptr.To[int64](90)), pod(v1.PodRunning, ptr.To[int64](5))}, 5},
	} {
		if got := podsEstimate(tc.pods); got != tc.want {
			t.Errorf("%s: podsEstimate = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRequeueDelay(t *testing.T) {
	for estimate, want := range map[int64]time.Duration{0: time.Second, 1: time.Second, 15: 8 * time.Second, 30: 16 * time.Second} {
		if got := requeueDelay(estimate); got != want {
			t.Errorf("requeueDelay(%d) = %v, want %v", estimate, got, want)
		}
	}
	if got := (&ResourcesRemainingError{Estimate: 15}).Error(); got != "some content remains in the namespace, estimate 15 seconds before it is removed" {
		t.Errorf("Error() = %q", got)
	}
}
