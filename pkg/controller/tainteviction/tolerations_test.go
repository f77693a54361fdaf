package tainteviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

func taint(key, value string, effect v1.TaintEffect) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: effect}
}

func tol(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect, seconds *int64) v1.Toleration {
	return v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect, TolerationSeconds: seconds}
}

func TestNoExecuteTaints(t *testing.T) {
	got := noExecuteTaints([]v1.Taint{
		taint("a", "", v1.TaintEffectNoSchedule),
		taint("b", "", v1.TaintEffectNoExecute),
		taint("c", "", v1.TaintEffectPreferNoSchedule),
		taint("d", "x", v1.TaintEffectNoExecute),
	})
	if len(got) != 2 || got[0].Key != "b" || got[1].Key != "d" {
		t.Errorf("noExecuteTaints = %v, want taints b and d", got)
	}
	if got := noExecuteTaints(nil); len(got) != 0 {
		t.Errorf("noExecuteTaints(nil) = %v", got)
	}
}

func TestTolerationTime(t *testing.T) {
	noExec := v1.TaintEffectNoExecute
	a := taint("a", "1", noExec)
	b := taint("b", "", noExec)
	tests := []struct {
		name        string
		taints      []v1.Taint
		tolerations []v1.Toleration
		compareOps  bool
		want        time.Duration
		tolerated   bool
	}{
		{"no tolerations", []v1.Taint{a}, nil, false, 0, false},
		{"key and value match", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpEqual, "1", noExec, nil)}, false, forever, true},
		{"empty operator means Equal", []v1.Taint{a}, []v1.Toleration{tol("a", "", "1", noExec, ptr.To[int64](7))}, false, 7 * time.Second, true},
		{"value differs", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpEqual, "2", noExec, nil)}, false, 0, false},
		{"Exists ignores value", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpExists, "", noExec, nil)}, false, forever, true},
		{"empty key Exists matches all", []v1.Taint{a, b}, []v1.Toleration{tol("", v1.TolerationOpExists, "", "", ptr.To[int64](3))}, false, 3 * time.Second, true},
		{"other effect does not match", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule, nil)}, false, 0, false},
		{"empty effect matches", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpExists, "", "", nil)}, false, forever, true},
		{"one taint of two tolerated", []v1.Taint{a, b}, []v1.Toleration{tol("a", v1.TolerationOpExists, "", noExec, nil)}, false, 0, false},
		{"minimum over taints", []v1.Taint{a, b}, []v1.Toleration{
			tol("a", v1.TolerationOpExists, "", noExec, ptr.To[int64](20)),
			tol("b", v1.TolerationOpExists, "", noExec, ptr.To[int64](10)),
		}, false, 10 * time.Second, true},
		{"unlimited does not lower the minimum", []v1.Taint{a, b}, []v1.Toleration{
			tol("a", v1.TolerationOpExists, "", noExec, nil),
			tol("b", v1.TolerationOpExists, "", noExec, ptr.To[int64](30)),
		}, false, 30 * time.Second, true},
		{"zero seconds evicts now", []v1.Taint{a, b}, []v1.Toleration{
			tol("a", v1.TolerationOpExists, "", noExec, ptr.To[int64](0)),
			tol("b", v1.TolerationOpExists, "", noExec, ptr.To[int64](30)),
		}, false, 0, true},
		{"negative seconds evict now", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpExists, "", noExec, ptr.To[int64](-5))}, false, 0, true},
		{"first matching toleration is the one used", []v1.Taint{a}, []v1.Toleration{
			tol("a", v1.TolerationOpExists, "", noExec, nil),
			tol("a", v1.TolerationOpExists, "", noExec, ptr.To[int64](10)),
		}, false, forever, true},
		{"unused toleration does not count", []v1.Taint{a}, []v1.Toleration{
			tol("a", v1.TolerationOpExists, "", noExec, ptr.To[int64](60)),
			tol("z", v1.TolerationOpExists, "", noExec, ptr.To[int64](1)),
		}, false, 60 * time.Second, true},
		{"Gt with the gate off", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpGt, "0", noExec, nil)}, false, 0, false},
		{"Gt with the gate on", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpGt, "0", noExec, nil)}, true, forever, true},
		{"Lt with the gate on, not matching", []v1.Taint{a}, []v1.Toleration{tol("a", v1.TolerationOpLt, "1", noExec, nil)}, true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, tolerated := tolerationTime(logger, tc.taints, tc.tolerations, tc.compareOps)
			if tolerated != tc.tolerated || (tolerated && got != tc.want) {
				t.Errorf("tolerationTime = (%v, %v), want (%v, %v)", got, tolerated, tc.want, tc.tolerated)
			}
		})
	}
}

func TestMinTolerationTime(t *testing.T) {
	tests := []struct {
		name    string
		seconds []*int64
		want    time.Duration
	}{
		{"none", nil, 0},
		{"all unlimited", []*int64{nil, nil}, forever},
		{"minimum", []*int64{ptr.To[int64](300), nil, ptr.To[int64](2)}, 2 * time.Second},
		{"negative wins", []*int64{ptr.To[int64](300), ptr.To[int64](-1)}, 0},
	}
	for _, tc := range tests {
		var tols []v1.Toleration
		for _, s := range tc.seconds {
			tols = append(tols, v1.Toleration{Operator: v1.TolerationOpExists, TolerationSeconds: s})
		}
		if got := minTolerationTime(tols); got != tc.want {
			t.Errorf("%s: minTolerationTime = %v, want %v", tc.name, got, tc.want)
		}
	}
}
