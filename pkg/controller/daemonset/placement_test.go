package daemonset

import (
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

func TestPlacement(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	zoneA := map[string]string{"zone": "a"}
	affinity := func(values ...string) dsOpt {
		return func(ds *apps.DaemonSet) {
			ds.Spec.Template.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: values}},
				}}},
			}}
		}
	}
	tol := func(key string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
	}
	for _, tc := range []struct {
		name      string
		ds        *apps.DaemonSet
		node      *v1.Node
		run, cont bool
	}{
		{"plain node", newDS(), newNode("n"), true, true},
		{"nodeSelector matches", newDS(withNodeSelector(zoneA)), newNode("n", nodeLabels(zoneA)), true, true},
		{"nodeSelector does not match", newDS(withNodeSelector(zoneA)), newNode("n"), false, false},
		{"affinity matches", newDS(affinity("a", "b")), newNode("n", nodeLabels(zoneA)), true, true},
		{"affinity does not match", newDS(affinity("b")), newNode("n", nodeLabels(zoneA)), false, false},
		{"nodeName other", newDS(func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.NodeName = "m" }), newNode("n"), false, false},
		{"nodeName same", newDS(func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.NodeName = "n" }), newNode("n"), true, true},
		{"NoSchedule untolerated: keep running", newDS(), newNode("n", tainted("x", v1.TaintEffectNoSchedule)), false, true},
		{"NoExecute untolerated", newDS(), newNode("n", tainted("x", v1.TaintEffectNoExecute)), false, false},
		{"PreferNoSchedule ignored", newDS(), newNode("n", tainted("x", v1.TaintEffectPreferNoSchedule)), true, true},
		{"NoSchedule tolerated", newDS(withTolerations(tol("x", v1.TaintEffectNoSchedule))), newNode("n", tainted("x", v1.TaintEffectNoSchedule)), true, true},
		{"NoExecute tolerated, NoSchedule not", newDS(withTolerations(tol("x", v1.TaintEffectNoExecute))),
			newNode("n", tainted("x", v1.TaintEffectNoExecute), tainted("y", v1.TaintEffectNoSchedule)), false, true},
		{"default: not-ready", newDS(), newNode("n", tainted(v1.TaintNodeNotReady, v1.TaintEffectNoExecute)), true, true},
		{"default: unschedulable", newDS(), newNode("n", tainted(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)), true, true},
		{"network-unavailable without hostNetwork", newDS(), newNode("n", tainted(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)), false, true},
		{"network-unavailable with hostNetwork", newDS(func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.HostNetwork = true }),
			newNode("n", tainted(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPlacement(tc.ds, false).on(logger, tc.node)
			if f.shouldRun != tc.run || f.shouldContinueRunning != tc.cont {
				t.Errorf("got shouldRun %v shouldContinueRunning %v, want %v %v", f.shouldRun, f.shouldContinueRunning, tc.run, tc.cont)
			}
		})
	}
}

func TestDaemonPodTolerations(t *testing.T) {
	own := v1.Toleration{Key: "x", Operator: v1.TolerationOpExists}
	notReady300 := v1.Toleration{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	in := []v1.Toleration{own, notReady300, notReady300}
	got := daemonPodTolerations(in, false)
	// Both matching tolerations are replaced by the default (seconds
	// dropped), in place; the other defaults follow.
	if len(got) != 3+5 || got[0] != own || got[1] != defaultTolerations[0] || got[2] != defaultTolerations[0] {
		t.Errorf("tolerations = %+v", got)
	}
	if in[1].TolerationSeconds == nil {
		t.Error("input modified")
	}
	if got := daemonPodTolerations(nil, true); len(got) != 7 || got[6] != hostNetworkToleration {
		t.Errorf("hostNetwork tolerations = %+v", got)
	}
}

func TestPlacementsCache(t *testing.T) {
	c := newPlacements(false)
	ds := newDS()
	p := c.of(ds)
	if c.of(ds) != p {
		t.Error("same object: placement rebuilt")
	}
	if c.of(newDS()) == p {
		t.Error("new object: placement reused")
	}
	c.forget(ds.UID)
	if len(c.entries) != 0 {
		t.Error("forget kept the entry")
	}
}

func TestTargetNodeNameAndPin(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	if _, err := targetNodeName(pod); err == nil {
		t.Error("pod without affinity: no error")
	}
	// An existing required term is replaced; other affinity stays.
	pod.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{},
		NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpExists}}},
		}}},
	}
	pod.Spec.Affinity = pinToNode(pod.Spec.Affinity, "n1")
	if n, err := targetNodeName(pod); err != nil || n != "n1" {
		t.Errorf("targetNodeName = %q, %v", n, err)
	}
	if pod.Spec.Affinity.PodAffinity == nil || len(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) != 1 {
		t.Errorf("affinity = %+v", pod.Spec.Affinity)
	}
	pod.Spec.NodeName = "bound"
	if n, _ := targetNodeName(pod); n != "bound" {
		t.Errorf("bound pod: %q", n)
	}
	for _, a := range []*v1.Affinity{nil, {}, {NodeAffinity: &v1.NodeAffinity{}}} {
		if n, err := targetNodeName(&v1.Pod{Spec: v1.PodSpec{Affinity: pinToNode(a, "x")}}); err != nil || n != "x" {
			t.Errorf("pinToNode(%+v): %q, %v", a, n, err)
		}
	}
}
