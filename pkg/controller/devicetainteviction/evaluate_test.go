package devicetainteviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func results(r ...resourceapi.DeviceRequestAllocationResult) []resourceapi.DeviceRequestAllocationResult {
	return r
}

// TestPodEviction: when a pod has to be evicted, and why, from its
// claims, their devices' taints in slices and rules, and the
// allocation's tolerations.
func TestPodEviction(t *testing.T) {
	p := pod("p", "c")
	noExec := slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute)), device("gpu-1"))
	clean := slice("s", 1, device("gpu-0"), device("gpu-1"))
	sliceReason := "ResourceSlice s gpu.example.com/node-1/gpu-0 taint #0"
	at := func(d time.Duration) *time.Time { return ptr.To(taintTime.Add(d)) }

	tests := []struct {
		name    string
		pod     *v1.Pod
		objs    []runtime.Object
		want    *time.Time // nil: no eviction
		reasons []string
	}{
		{name: "pod without claims", pod: pod("p"), objs: []runtime.Object{noExec}},
		{name: "pod not bound", pod: func() *v1.Pod { p := pod("p", "c"); p.Spec.NodeName = ""; return p }(),
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0")), p)}},
		{name: "claim missing", pod: p, objs: []runtime.Object{noExec}},
		{name: "claim not allocated", pod: p, objs: []runtime.Object{noExec, claim("c", nil, p)}},
		{name: "claim not reserved for the pod", pod: p, objs: []runtime.Object{noExec, claim("c", results(result("gpu-0")))}},
		{name: "claim reserved for an earlier pod of the name", pod: p,
			objs: []runtime.Object{noExec, func() *resourceapi.ResourceClaim {
				c := claim("c", results(result("gpu-0")), p)
				c.Status.ReservedFor[0].UID = "old"
				return c
			}()}},
		{name: "untainted device", pod: p, objs: []runtime.Object{noExec, claim("c", results(result("gpu-1")), p)}},
		{name: "NoExecute slice taint", pod: p, objs: []runtime.Object{noExec, claim("c", results(result("gpu-0")), p)},
			want: at(0), reasons: []string{sliceReason}},
		{name: "NoSchedule and None taints do not evict", pod: p,
			objs: []runtime.Object{slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoSchedule), taint(resourceapi.DeviceTaintEffectNone))),
				claim("c", results(result("gpu-0")), p)}},
		{name: "tolerated forever", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, nil))), p)}},
		{name: "tolerationSeconds", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](60)))), p)},
			want: at(time.Minute), reasons: []string{sliceReason}},
		{name: "smallest tolerationSeconds", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0",
				toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](60)),
				toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](30)))), p)},
			want: at(30 * time.Second), reasons: []string{sliceReason}},
		{name: "negative tolerationSeconds is zero", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](-5)))), p)},
			want: at(0), reasons: []string{sliceReason}},
		{name: "a forever toleration wins over one with seconds", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0",
				toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](30)),
				toleration(resourceapi.DeviceTaintEffectNoExecute, nil))), p)}},
		{name: "toleration without effect does not count (upstream)", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0", toleration("", nil))), p)},
			want: at(0), reasons: []string{sliceReason}},
		{name: "toleration of another key", pod: p,
			objs: []runtime.Object{noExec, claim("c", results(result("gpu-0", resourceapi.DeviceToleration{
				Key: "other", Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoExecute})), p)},
			want: at(0), reasons: []string{sliceReason}},
		{name: "outdated slice generation is ignored", pod: p,
			objs: []runtime.Object{noExec, slice("s-new", 2, device("gpu-2")), claim("c", results(result("gpu-0")), p)}},
		{name: "NoExecute rule", pod: p,
			objs: []runtime.Object{clean, rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0"), claim("c", results(result("gpu-0")), p)},
			want: at(0), reasons: []string{"DeviceTaintRule r"}},
		{name: "NoExecute rule, device not published", pod: p,
			objs: []runtime.Object{rule("r", resourceapi.DeviceTaintEffectNoExecute, ""), claim("c", results(result("gpu-9")), p)},
			want: at(0), reasons: []string{"DeviceTaintRule r"}},
		{name: "rule with tolerationSeconds", pod: p,
			objs: []runtime.Object{clean, rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0"),
				claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](90)))), p)},
			want: at(90 * time.Second), reasons: []string{"DeviceTaintRule r"}},
		{name: "None rule", pod: p,
			objs: []runtime.Object{clean, rule("r", resourceapi.DeviceTaintEffectNone, "gpu-0"), claim("c", results(result("gpu-0")), p)}},
		{name: "rule for another device", pod: p,
			objs: []runtime.Object{clean, rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-1"), claim("c", results(result("gpu-0")), p)}},
		{name: "rule without selector", pod: p,
			objs: []runtime.Object{clean, func() *resourceapi.DeviceTaintRule {
				r := rule("r", resourceapi.DeviceTaintEffectNoExecute, "")
				r.Spec.DeviceSelector = nil
				return r
			}(), claim("c", results(result("gpu-0")), p)}},
		{name: "slice and rule: earliest time, all reasons, rules first", pod: p,
			objs: []runtime.Object{noExec, func() *resourceapi.DeviceTaintRule {
				r := rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0")
				r.Spec.Taint.TimeAdded = ptr.To(metav1.NewTime(taintTime.Add(-time.Hour)))
				return r
			}(), claim("c", results(result("gpu-0")), p)},
			want: at(-time.Hour), reasons: []string{"DeviceTaintRule r", sliceReason}},
		{name: "two claims: the earlier", pod: pod("p", "c", "d"),
			objs: []runtime.Object{noExec,
				claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](60)))), pod("p")),
				claim("d", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](10)))), pod("p"))},
			want: at(10 * time.Second), reasons: []string{sliceReason}},
		{name: "generated claim owned by the pod", pod: generatedPod(),
			objs: []runtime.Object{noExec, ownedClaim(generatedPod().UID)}, want: at(0), reasons: []string{sliceReason}},
		{name: "generated claim owned by another pod", pod: generatedPod(),
			objs: []runtime.Object{noExec, ownedClaim("someone-else")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.add(t, tt.objs...)
			e, err := h.newEvaluator()
			if err != nil {
				t.Fatal(err)
			}
			ev, err := e.podEviction(tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == nil && ev != nil:
				t.Fatalf("eviction %s, want none", ev)
			case tt.want == nil:
				return
			case ev == nil:
				t.Fatalf("no eviction, want one at %s", tt.want)
			}
			if !ev.when.Equal(*tt.want) {
				t.Errorf("eviction at %s, want %s", ev.when, tt.want)
			}
			var reasons []string
			for _, r := range ev.reasons {
				reasons = append(reasons, r.String())
			}
			if len(reasons) != len(tt.reasons) {
				t.Fatalf("reasons %q, want %q", reasons, tt.reasons)
			}
			for i := range reasons {
				if reasons[i] != tt.reasons[i] {
					t.Errorf("reasons %q, want %q", reasons, tt.reasons)
				}
			}
		})
	}
}

// generatedPod uses a claim generated from a template, named in its
// status.
func generatedPod() *v1.Pod {
	p := pod("p")
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("tmpl")}}
	p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("p-gpu-abcde")}}
	return p
}

// ownedClaim is the generated claim, owned by the pod of that UID and
// reserved for the generated pod.
func ownedClaim(owner types.UID) *resourceapi.ResourceClaim {
	c := claim("p-gpu-abcde", results(result("gpu-0")), generatedPod())
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: owner, Controller: ptr.To(true)}}
	return c
}
