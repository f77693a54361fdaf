package nodelifecycle

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNoScheduleTaints(t *testing.T) {
	hb := t0
	tests := []struct {
		name string
		node *v1.Node
		want []string
	}{
		{name: "healthy", node: newNode("n", kubeletConds(v1.ConditionTrue, hb))},
		{name: "no conditions", node: newNode("n")},
		{name: "not ready", node: newNode("n", kubeletConds(v1.ConditionFalse, hb)), want: []string{"node.kubernetes.io/not-ready:NoSchedule"}},
		{name: "unknown", node: newNode("n", kubeletConds(v1.ConditionUnknown, hb)), want: []string{"node.kubernetes.io/unreachable:NoSchedule"}},
		{name: "pressures, network, cordoned", node: newNode("n",
			withCondition(v1.NodeMemoryPressure, v1.ConditionTrue, hb),
			withCondition(v1.NodeDiskPressure, v1.ConditionTrue, hb),
			withCondition(v1.NodePIDPressure, v1.ConditionTrue, hb),
			withCondition(v1.NodeNetworkUnavailable, v1.ConditionTrue, hb),
			withCondition(v1.NodeReady, v1.ConditionTrue, hb),
			func(n *v1.Node) { n.Spec.Unschedulable = true }),
			want: []string{
				"node.kubernetes.io/memory-pressure:NoSchedule", "node.kubernetes.io/disk-pressure:NoSchedule",
				"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/network-unavailable:NoSchedule",
				"node.kubernetes.io/unschedulable:NoSchedule",
			}},
		{name: "pressure unknown is no pressure", node: newNode("n", withCondition(v1.NodeDiskPressure, v1.ConditionUnknown, hb))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := taintKeys(noScheduleTaints(tc.node)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWithNoScheduleTaints(t *testing.T) {
	now := metav1.NewTime(t0)
	old := metav1.NewTime(t0.Add(-time.Hour))
	foreign := v1.Taint{Key: "example.com/dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}
	foreignKeyOtherEffect := v1.Taint{Key: v1.TaintNodeDiskPressure, Effect: v1.TaintEffectPreferNoSchedule}
	stampedNotReady := v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule, TimeAdded: &old}
	tests := []struct {
		name string
		node *v1.Node
		want []v1.Taint
	}{
		{
			name: "ready node loses not-ready, keeps others and NoExecute",
			node: newNode("n", kubeletConds(v1.ConditionTrue, t0), withTaints(foreign, v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}, unreachableTaint, foreignKeyOtherEffect)),
			want: []v1.Taint{foreign, unreachableTaint, foreignKeyOtherEffect},
		},
		{
			name: "existing taint kept as it is, missing one appended with a time",
			node: newNode("n", kubeletConds(v1.ConditionFalse, t0), withTaints(stampedNotReady, foreign), func(n *v1.Node) { n.Spec.Unschedulable = true }),
			want: []v1.Taint{stampedNotReady, foreign, {Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule, TimeAdded: &now}},
		},
		{
			name: "unknown swaps not-ready for unreachable",
			node: newNode("n", kubeletConds(v1.ConditionUnknown, t0), withTaints(stampedNotReady)),
			want: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoSchedule, TimeAdded: &now}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withNoScheduleTaints(tc.node, now)
			if !reflect.DeepEqual(tc.node.Spec.Taints, tc.want) {
				t.Errorf("got %v\nwant %v", tc.node.Spec.Taints, tc.want)
			}
		})
	}
}

func TestWithNoExecuteTaint(t *testing.T) {
	now := metav1.NewTime(t0)
	old := metav1.NewTime(t0.Add(-time.Hour))
	foreign := v1.Taint{Key: "example.com/x", Effect: v1.TaintEffectNoExecute}
	noSchedule := v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}
	stamped := func(t v1.Taint, at *metav1.Time) v1.Taint { t.TimeAdded = at; return t }
	tests := []struct {
		name   string
		taints []v1.Taint
		want   *v1.Taint
		result []v1.Taint
	}{
		{name: "add unreachable", taints: []v1.Taint{noSchedule}, want: &unreachableTaint,
			result: []v1.Taint{noSchedule, stamped(unreachableTaint, &now)}},
		{name: "swap in one go", taints: []v1.Taint{stamped(unreachableTaint, &old), foreign}, want: &notReadyTaint,
			result: []v1.Taint{foreign, stamped(notReadyTaint, &now)}},
		{name: "present taint keeps its time", taints: []v1.Taint{stamped(notReadyTaint, &old)}, want: &notReadyTaint,
			result: []v1.Taint{stamped(notReadyTaint, &old)}},
		{name: "clear", taints: []v1.Taint{noSchedule, stamped(notReadyTaint, &old), foreign}, want: nil,
			result: []v1.Taint{noSchedule, foreign}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode("n", withTaints(tc.taints...))
			withNoExecuteTaint(n, tc.want, now)
			if !reflect.DeepEqual(n.Spec.Taints, tc.result) {
				t.Errorf("got %v\nwant %v", n.Spec.Taints, tc.result)
			}
		})
	}
}

func TestNoExecuteTaintFor(t *testing.T) {
	for status, want := range map[v1.ConditionStatus]*v1.Taint{
		v1.ConditionTrue: nil, v1.ConditionFalse: &notReadyTaint, v1.ConditionUnknown: &unreachableTaint,
	} {
		if got := noExecuteTaintFor(status); got != want {
			t.Errorf("%s: got %v, want %v", status, got, want)
		}
	}
}
