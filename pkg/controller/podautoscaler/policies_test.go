package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

func TestScaleLimits(t *testing.T) {
	max, min := autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect
	recent := []scaleEvent{{change: 3, timestamp: t0.Add(-10 * time.Second)}, {change: 5, timestamp: t0.Add(-100 * time.Second)}}
	tests := []struct {
		name       string
		up         bool
		current    int32
		ups, downs []scaleEvent
		rules      *autoscalingv2.HPAScalingRules
		want       int32
	}{
		{name: "up: pods", up: true, current: 5, rules: rules(0, max, pods(4, 60)), want: 9},
		{name: "up: percent rounds up", up: true, current: 3, rules: rules(0, max, percent(10, 60)), want: 4},
		{name: "up: max of two", up: true, current: 10, rules: rules(0, max, pods(4, 60), percent(100, 60)), want: 20},
		{name: "up: min of two", up: true, current: 10, rules: rules(0, min, pods(4, 60), percent(100, 60)), want: 14},
		{name: "up: earlier scale-ups in the period count", up: true, current: 8, ups: recent, rules: rules(0, max, pods(4, 60)), want: 9},
		{name: "up: longer period sees more", up: true, current: 8, ups: recent, rules: rules(0, max, pods(4, 120)), want: 4},
		{name: "up: scale-downs in the period give room", up: true, current: 8, downs: recent, rules: rules(0, max, pods(4, 60)), want: 15},
		{name: "up: disabled", up: true, current: 8, rules: rules(0, autoscalingv2.DisabledPolicySelect, pods(4, 60)), want: 8},
		{name: "down: percent rounds down", current: 5, rules: rules(0, max, percent(50, 60)), want: 2},
		{name: "down: max change is the lowest", current: 10, rules: rules(0, max, pods(2, 60), percent(50, 60)), want: 5},
		{name: "down: min change is the highest", current: 10, rules: rules(0, min, pods(2, 60), percent(50, 60)), want: 8},
		{name: "down: earlier scale-downs count", current: 10, downs: recent, rules: rules(0, max, pods(4, 60)), want: 9},
		{name: "down: disabled", current: 10, rules: rules(0, autoscalingv2.DisabledPolicySelect, pods(4, 60)), want: 10},
	}
	for _, tc := range tests {
		var got int32
		if tc.up {
			got = scaleUpLimit(tc.current, tc.ups, tc.downs, tc.rules, t0)
		} else {
			got = scaleDownLimit(tc.current, tc.ups, tc.downs, tc.rules, t0)
		}
		if got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestBoundReplicas(t *testing.T) {
	for _, tc := range []struct {
		current, desired, lo, hi int32
		want                     int32
		reason                   string
	}{
		{1, 3, 1, 10, 3, "DesiredWithinRange"},
		{1, 8, 1, 10, 4, "ScaleUpLimit"},
		{3, 8, 1, 10, 6, "ScaleUpLimit"},
		{6, 12, 1, 10, 10, "TooManyReplicas"},
		{3, 1, 2, 10, 2, "TooFewReplicas"},
	} {
		got, reason, _ := boundReplicas(tc.current, tc.desired, tc.lo, tc.hi)
		if got != tc.want || reason != tc.reason {
			t.Errorf("%+v: got %d %s", tc, got, reason)
		}
	}
}

func TestStabilizeWithBehaviors(t *testing.T) {
	h := newHistory()
	h.recordInitial("k", 4, t0)
	// A scale-up window holds the lowest recent recommendation.
	if got := h.stabilizeWithBehaviors("k", 4, 8, 30*time.Second, 0, t0.Add(10*time.Second)); got != 4 {
		t.Errorf("within the scale-up window: %d, want 4", got)
	}
	if got := h.stabilizeWithBehaviors("k", 4, 8, 30*time.Second, 0, t0.Add(20*time.Second)); got != 4 {
		t.Errorf("the initial 4 is still within 30s: %d, want 4", got)
	}
	if got := h.stabilizeWithBehaviors("k", 4, 8, 30*time.Second, 0, t0.Add(45*time.Second)); got != 8 {
		t.Errorf("after the window: %d, want 8", got)
	}
	// Old slots are reused: the list does not grow past the window.
	if n := len(h.recommendations["k"]); n > 3 {
		t.Errorf("%d recommendations kept", n)
	}
}

func TestStoreScaleEventReusesOutdated(t *testing.T) {
	h := newHistory()
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MaxChangePolicySelect, pods(4, 60)), ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, pods(4, 60))}
	h.storeScaleEvent(b, "k", 1, 3, t0)
	h.storeScaleEvent(b, "k", 3, 5, t0.Add(30*time.Second))
	h.storeScaleEvent(b, "k", 5, 7, t0.Add(90*time.Second)) // the first is outdated now
	ups, downs := h.events("k")
	if len(ups) != 2 || len(downs) != 0 {
		t.Fatalf("ups %+v downs %+v", ups, downs)
	}
	if got := changeInPeriod(60, ups, t0.Add(90*time.Second)); got != 2 {
		t.Errorf("change in the last minute %d, want 2", got)
	}
	h.storeScaleEvent(nil, "k", 7, 1, t0)
	if _, downs := h.events("k"); len(downs) != 0 {
		t.Error("stored an event without behavior")
	}
}
