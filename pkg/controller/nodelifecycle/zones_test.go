package nodelifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func readyConds(ready, notReady, unknown, missing int) []*v1.NodeCondition {
	var out []*v1.NodeCondition
	add := func(n int, s v1.ConditionStatus) {
		for i := 0; i < n; i++ {
			out = append(out, &v1.NodeCondition{Type: v1.NodeReady, Status: s})
		}
	}
	add(ready, v1.ConditionTrue)
	add(notReady, v1.ConditionFalse)
	add(unknown, v1.ConditionUnknown)
	for i := 0; i < missing; i++ {
		out = append(out, nil)
	}
	return out
}

func TestZoneStateOf(t *testing.T) {
	p := evictionPolicy{unhealthyZoneThreshold: 0.55}
	tests := []struct {
		name         string
		conds        []*v1.NodeCondition
		wantNotReady int
		want         zoneState
	}{
		{name: "empty", want: stateNormal},
		{name: "all ready", conds: readyConds(3, 0, 0, 0), want: stateNormal},
		{name: "none ready", conds: readyConds(0, 1, 1, 1), wantNotReady: 3, want: stateFullDisruption},
		{name: "single not ready", conds: readyConds(0, 0, 1, 0), wantNotReady: 1, want: stateFullDisruption},
		{name: "two of three not ready: too few to be partial", conds: readyConds(1, 2, 0, 0), wantNotReady: 2, want: stateNormal},
		{name: "three of five not ready (60%)", conds: readyConds(2, 1, 2, 0), wantNotReady: 3, want: statePartialDisruption},
		{name: "three of six not ready (50%)", conds: readyConds(3, 3, 0, 0), wantNotReady: 3, want: stateNormal},
		{name: "missing conditions count as not ready", conds: readyConds(2, 0, 0, 3), wantNotReady: 3, want: statePartialDisruption},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, s := p.zoneStateOf(tc.conds)
			if n != tc.wantNotReady || s != tc.want {
				t.Errorf("got %d, %s; want %d, %s", n, s, tc.wantNotReady, tc.want)
			}
		})
	}
}

func TestQPSFor(t *testing.T) {
	p := evictionPolicy{evictionQPS: 0.1, secondaryEvictionQPS: 0.01, largeClusterThreshold: 50}
	tests := []struct {
		state zoneState
		size  int
		want  float32
	}{
		{stateNormal, 10, 0.1},
		{stateNormal, 100, 0.1},
		{statePartialDisruption, 50, 0},
		{statePartialDisruption, 51, 0.01},
		{stateFullDisruption, 10, 0.1},
	}
	for _, tc := range tests {
		if got := p.qpsFor(tc.state, tc.size); got != tc.want {
			t.Errorf("%s with %d nodes: got %v, want %v", tc.state, tc.size, got, tc.want)
		}
	}
}

func TestZoneKey(t *testing.T) {
	tests := []struct {
		labels []string
		want   string
	}{
		{nil, ""},
		{[]string{v1.LabelTopologyZone, "z1"}, ":\x00:z1"},
		{[]string{v1.LabelTopologyZone, "z1", v1.LabelTopologyRegion, "r1"}, "r1:\x00:z1"},
		{[]string{v1.LabelTopologyZone, "z1", v1.LabelFailureDomainBetaZone, "old"}, ":\x00:old"},
		{[]string{v1.LabelTopologyRegion, "r1", v1.LabelFailureDomainBetaRegion, "oldr"}, "oldr:\x00:"},
	}
	for _, tc := range tests {
		if got := zoneKey(newNode("n", withLabels(tc.labels...))); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.labels, got, tc.want)
		}
	}
}
