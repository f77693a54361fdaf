package disruption

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	rcRef     = ownerRef("v1", "ReplicationController", "rc", "rc-uid")
	rsRef     = ownerRef("apps/v1", "ReplicaSet", "rs", "rs-uid")
	dRSRef    = ownerRef("apps/v1", "ReplicaSet", "d-1", "d-rs-uid")
	setRef    = ownerRef("apps/v1", "StatefulSet", "set", "set-uid")
	widgetRef = ownerRef("example.com/v1", "Widget", "w", "w-uid")
)

// Each finder yields its controller's desired scale as expectedPods.
func TestExpectedCountPerFinder(t *testing.T) {
	workloads := []runtime.Object{
		rc("rc", "rc-uid", 3),
		deployment("d", "d-uid", 4),
		rs("d-1", "d-rs-uid", 2, ownerRef("apps/v1", "Deployment", "d", "d-uid")),
		rs("rs", "rs-uid", 5),
		statefulSet("set", "set-uid", 6),
		rs("lost", "lost-uid", 1, ownerRef("apps/v1", "Deployment", "gone", "gone-uid")),
	}
	cases := []struct {
		name     string
		pods     []runtime.Object
		expected int32
	}{
		{"ReplicationController", pods("p", 2, rcRef), 3},
		{"Deployment through its ReplicaSet", pods("p", 2, dRSRef), 4},
		{"ReplicaSet", pods("p", 2, rsRef), 5},
		{"ReplicaSet as extensions/v1beta1", pods("p", 2, ownerRef("extensions/v1beta1", "ReplicaSet", "rs", "rs-uid")), 5},
		{"StatefulSet", pods("p", 2, setRef), 6},
		{"custom resource's scale subresource", pods("p", 2, widgetRef), 7},
		{"ReplicaSet of a missing Deployment, through its scale", pods("p", 2, ownerRef("apps/v1", "ReplicaSet", "lost", "lost-uid")), 8},
		{"two controllers add up", append(pods("a", 2, rcRef), pods("b", 1, setRef)...), 9},
		{"a pod without controller is not counted", append(pods("a", 1, rcRef), pod("naked")), 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append(workloads, tc.pods...)...)
			f.scales.set(widgetGR, "w", "w-uid", 7)
			f.scales.set(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "lost", "lost-uid", 8)
			p := pdbMax("pdb", intstr.FromInt32(1))
			f.add(p)
			pods, _ := f.c.selectedPods(p)
			e, err := f.c.expect(f.ctx, p, pods)
			if err != nil {
				t.Fatal(err)
			}
			if e.expected != tc.expected || e.desiredHealthy != tc.expected-1 {
				t.Errorf("expected %d desired %d, want %d and %d", e.expected, e.desiredHealthy, tc.expected, tc.expected-1)
			}
		})
	}
}

// The custom resource's scale is read once per controller, not per pod.
func TestScaleReadOncePerController(t *testing.T) {
	f := newFixture(t, pods("p", 5, widgetRef)...)
	f.scales.set(widgetGR, "w", "w-uid", 5)
	p := pdbMin("pdb", intstr.FromString("50%"))
	f.add(p)
	s := f.mustSync("pdb")
	if s.ExpectedPods != 5 || s.DesiredHealthy != 3 {
		t.Errorf("status %+v", s)
	}
	if f.scales.calls != 1 {
		t.Errorf("%d scale reads, want 1", f.scales.calls)
	}
}

// Controllers the finders cannot resolve fail the expected count.
func TestExpectedCountErrors(t *testing.T) {
	cases := []struct {
		name string
		ref  v1.Pod
		want string
	}{
		{"a Job has no scale subresource", *pod("p", ownerRef("batch/v1", "Job", "j", "j-uid")), "jobs.batch does not implement the scale subresource"},
		{"a custom resource that is gone", *pod("p", ownerRef("example.com/v1", "Widget", "gone", "x")), `found no controllers for pod "p"`},
		{"a custom resource of another uid", *pod("p", ownerRef("example.com/v1", "Widget", "w", "other")), `found no controllers for pod "p"`},
		{"a missing ReplicationController", *pod("p", rcRef), `found no controllers for pod "p"`},
		{"an unknown kind", *pod("p", ownerRef("example.com/v1", "Gadget", "g", "g-uid")), `no matches for kind "Gadget" in version "example.com/v1"`},
		{"an unparsable apiVersion", *pod("p", ownerRef("a/b/c", "ReplicaSet", "rs", "rs-uid")), "unexpected GroupVersion string: a/b/c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &tc.ref)
			f.scales.set(widgetGR, "w", "w-uid", 7)
			p := pdbMax("pdb", intstr.FromString("10%"))
			f.add(p)
			pods, _ := f.c.selectedPods(p)
			_, err := f.c.expect(f.ctx, p, pods)
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// Percentages of the expected count are rounded up, for minAvailable and
// for maxUnavailable alike.
func TestPercentagesRoundUp(t *testing.T) {
	cases := []struct {
		pdb              string
		v                intstr.IntOrString
		scale            int32
		expected, wanted int32
	}{
		{"min", intstr.FromString("50%"), 3, 3, 2},
		{"min", intstr.FromString("90%"), 10, 10, 9},
		{"min", intstr.FromString("1%"), 3, 3, 1},
		{"min", intstr.FromString("0%"), 3, 3, 0},
		{"min", intstr.FromString("100%"), 3, 3, 3},
		{"max", intstr.FromString("50%"), 3, 3, 1},
		{"max", intstr.FromString("34%"), 3, 3, 1},
		{"max", intstr.FromString("10%"), 10, 10, 9},
		{"max", intstr.FromString("1%"), 10, 10, 9},
		{"max", intstr.FromString("100%"), 4, 4, 0},
		{"max", intstr.FromInt32(5), 3, 3, 0},
		{"max", intstr.FromInt32(0), 3, 3, 3},
		// An integer minAvailable counts the selected pods (2), not the scale.
		{"min", intstr.FromInt32(2), 5, 2, 2},
	}
	for _, tc := range cases {
		f := newFixture(t, rs("rs", "rs-uid", tc.scale))
		for _, p := range pods("p", 2, rsRef) {
			f.add(p)
		}
		p := pdbMin("pdb", tc.v)
		if tc.pdb == "max" {
			p = pdbMax("pdb", tc.v)
		}
		pods, _ := f.c.selectedPods(p)
		e, err := f.c.expect(f.ctx, p, pods)
		if err != nil {
			t.Fatal(err)
		}
		if e.expected != tc.expected || e.desiredHealthy != tc.wanted {
			t.Errorf("%s %s of %d: expected %d desired %d, want %d and %d", tc.pdb, tc.v.String(), tc.scale, e.expected, e.desiredHealthy, tc.expected, tc.wanted)
		}
	}
}
