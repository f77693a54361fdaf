package tainteviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestTolerationsEqualAgreesWithSemanticDeepEqual(t *testing.T) {
	// A field added to v1.Toleration must be compared too.
	if n := reflect.TypeOf(v1.Toleration{}).NumField(); n != 5 {
		t.Fatalf("v1.Toleration has %d fields; tolerationsEqual compares 5", n)
	}
	five, six, fiveAgain := int64(5), int64(6), int64(5)
	base := v1.Toleration{Key: "k", Operator: v1.TolerationOpEqual, Value: "v", Effect: v1.TaintEffectNoExecute, TolerationSeconds: &five}
	variants := map[string]func(*v1.Toleration){
		"key":             func(x *v1.Toleration) { x.Key = "other" },
		"operator":        func(x *v1.Toleration) { x.Operator = v1.TolerationOpExists },
		"value":           func(x *v1.Toleration) { x.Value = "other" },
		"effect":          func(x *v1.Toleration) { x.Effect = v1.TaintEffectNoSchedule },
		"seconds":         func(x *v1.Toleration) { x.TolerationSeconds = &six },
		"seconds nil":     func(x *v1.Toleration) { x.TolerationSeconds = nil },
		"same seconds":    func(x *v1.Toleration) { x.TolerationSeconds = &fiveAgain },
		"nothing changed": func(*v1.Toleration) {},
	}
	check := func(name string, a, b []v1.Toleration) {
		t.Helper()
		if got, want := tolerationsEqual(a, b), equality.Semantic.DeepEqual(a, b); got != want {
			t.Errorf("%s: tolerationsEqual = %v, Semantic.DeepEqual = %v", name, got, want)
		}
	}
	for name, change := range variants {
		other := base
		change(&other)
		check(name, []v1.Toleration{base}, []v1.Toleration{other})
		check(name+", reversed", []v1.Toleration{other}, []v1.Toleration{base})
	}
	check("nil and empty", nil, []v1.Toleration{})
	check("different lengths", []v1.Toleration{base}, []v1.Toleration{base, base})
	check("order", []v1.Toleration{base, {Key: "a"}}, []v1.Toleration{{Key: "a"}, base})
}

func TestNoExecuteTaintsEqualAgreesWithSemanticDeepEqual(t *testing.T) {
	if n := reflect.TypeOf(v1.Taint{}).NumField(); n != 4 {
		t.Fatalf("v1.Taint has %d fields; noExecuteTaintsEqual compares 4", n)
	}
	t1 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t2 := metav1.NewTime(t1.Add(time.Second))
	t1Local := metav1.NewTime(t1.In(time.FixedZone("x", 3600)))
	ne := v1.Taint{Key: "k", Value: "v", Effect: v1.TaintEffectNoExecute, TimeAdded: &t1}
	ns := v1.Taint{Key: "s", Effect: v1.TaintEffectNoSchedule}
	with := func(change func(*v1.Taint)) v1.Taint {
		c := ne
		change(&c)
		return c
	}
	cases := map[string][2][]v1.Taint{
		"same":                  {{ne}, {ne}},
		"nil and empty":         {nil, {}},
		"only other effects":    {{ns}, nil},
		"other effects ignored": {{ns, ne}, {ne, ns, ns}},
		"key":                   {{ne}, {with(func(x *v1.Taint) { x.Key = "o" })}},
		"value":                 {{ne}, {with(func(x *v1.Taint) { x.Value = "o" })}},
		"effect":                {{ne}, {with(func(x *v1.Taint) { x.Effect = v1.TaintEffectNoSchedule })}},
		"time":                  {{ne}, {with(func(x *v1.Taint) { x.TimeAdded = &t2 })}},
		"time nil":              {{ne}, {with(func(x *v1.Taint) { x.TimeAdded = nil })}},
		"same time, other zone": {{ne}, {with(func(x *v1.Taint) { x.TimeAdded = &t1Local })}},
		"one more":              {{ne}, {ne, ne}},
		"order":                 {{ne, with(func(x *v1.Taint) { x.Key = "o" })}, {with(func(x *v1.Taint) { x.Key = "o" }), ne}},
	}
	for name, c := range cases {
		for _, pair := range [][2][]v1.Taint{c, {c[1], c[0]}} {
			got := noExecuteTaintsEqual(pair[0], pair[1])
			want := equality.Semantic.DeepEqual(noExecuteTaints(pair[0]), noExecuteTaints(pair[1]))
			if got != want {
				t.Errorf("%s: noExecuteTaintsEqual = %v, Semantic.DeepEqual = %v", name, got, want)
			}
		}
	}
}
