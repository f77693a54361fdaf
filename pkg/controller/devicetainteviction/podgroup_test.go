package devicetainteviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// TestPodGroupClaim: under DRAWorkloadResourceClaims a claim reserved for
// a PodGroup taints the group's pods, and a change of the claim enqueues
// them; without the gate such a reservation counts for nothing.
func TestPodGroupClaim(t *testing.T) {
	member := pod("member", "c")
	member.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("group")}
	groupClaim := claim("c", results(result("gpu-0")))
	groupClaim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{APIGroup: schedulingapi.GroupName, Resource: "podgroups", Name: "group", UID: "group-uid"}}
	tainted := slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute)))

	for _, enabled := range []bool{true, false} {
		h := newHarnessWith(t, Features{WorkloadResourceClaims: enabled})
		h.add(t, tainted, groupClaim, member)
		e, err := h.newEvaluator()
		if err != nil {
			t.Fatal(err)
		}
		ev, err := e.podEviction(member)
		if err != nil {
			t.Fatal(err)
		}
		if (ev != nil) != enabled {
			t.Errorf("gate %v: eviction %v", enabled, ev)
		}
		h.claimChanged(klog.Background(), nil, groupClaim)
		want := []string(nil)
		if enabled {
			want = []string{"pod:ns/member"}
		}
		equalStrings(t, "claim's consumers", h.queued(), want)
	}
}
