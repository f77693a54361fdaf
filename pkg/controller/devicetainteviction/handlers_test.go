package devicetainteviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// TestPodHandlers: only bound pods with claims are enqueued, and updates
// only when the node or the claims' names change.
func TestPodHandlers(t *testing.T) {
	h := newHarness(t)
	unbound := pod("u", "c")
	unbound.Spec.NodeName = ""
	h.addPod(unbound)
	h.addPod(pod("plain"))
	h.addPod(pod("p", "c"))
	equalStrings(t, "adds", h.queued(), []string{"pod:ns/p"})

	p := pod("p", "c")
	conditioned := p.DeepCopy()
	conditioned.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}}
	h.updatePod(p, conditioned)
	equalStrings(t, "condition update", h.queued(), nil)

	h.updatePod(unbound, pod("u", "c"))
	named := p.DeepCopy()
	named.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: ptr.To("x")}}
	h.updatePod(p, named)
	equalStrings(t, "binding and claim names", h.queued(), []string{"pod:ns/p", "pod:ns/u"})

	h.deletePod(p)
	h.deletePod(pod("plain"))
	equalStrings(t, "deletes", h.queued(), []string{"pod:ns/p"})
}

// TestClaimHandler: the consumers of a claim are enqueued when its
// allocation or reservations change, before and after.
func TestClaimHandler(t *testing.T) {
	h := newHarness(t)
	logger := klog.Background()
	a, b := pod("a", "c"), pod("b", "c")

	h.claimChanged(logger, nil, claim("c", nil, a))
	equalStrings(t, "unallocated add", h.queued(), nil)

	allocated := claim("c", results(result("gpu-0")), a)
	h.claimChanged(logger, claim("c", nil, a), allocated)
	equalStrings(t, "allocated", h.queued(), []string{"pod:ns/a"})

	withDevices := allocated.DeepCopy()
	withDevices.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: driver, Pool: poolName, Device: "gpu-0"}}
	h.claimChanged(logger, allocated, withDevices)
	equalStrings(t, "device status only", h.queued(), nil)

	h.claimChanged(logger, allocated, claim("c", results(result("gpu-0")), b))
	equalStrings(t, "reservation moved", h.queued(), []string{"pod:ns/a", "pod:ns/b"})

	h.claimChanged(logger, allocated, nil)
	equalStrings(t, "deleted", h.queued(), []string{"pod:ns/a"})
}

// TestSliceHandler: the consumers of the pool's claims are enqueued when
// the pool's NoExecute taints may have changed, and only then.
func TestSliceHandler(t *testing.T) {
	h := newHarness(t)
	logger := klog.Background()
	a := pod("a", "c")
	other := claim("o", []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: "elsewhere", Device: "gpu-0"}}, pod("b", "o"))
	h.add(t, claim("c", results(result("gpu-0")), a), other)
	clean := slice("s", 1, device("gpu-0"))
	tainted := slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute)))

	h.add(t, clean)
	h.sliceChanged(logger, nil, clean)
	equalStrings(t, "untainted slice added", h.queued(), nil)

	h.update(t, tainted)
	h.sliceChanged(logger, clean, tainted)
	equalStrings(t, "NoExecute taint added", h.queued(), []string{"pod:ns/a"})

	noSchedule := slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoSchedule)))
	h.update(t, noSchedule)
	h.sliceChanged(logger, clean, noSchedule)
	equalStrings(t, "NoSchedule taint added", h.queued(), nil)

	h.update(t, tainted)
	relabeled := tainted.DeepCopy()
	relabeled.Labels = map[string]string{"x": "y"}
	h.sliceChanged(logger, tainted, relabeled)
	equalStrings(t, "same taints", h.queued(), nil)

	newer := slice("s2", 2, device("gpu-1"))
	h.add(t, newer)
	h.sliceChanged(logger, nil, newer)
	equalStrings(t, "newer generation in a tainted pool", h.queued(), []string{"pod:ns/a"})
}

// TestRuleHandler: a new or changed rule gets its status at once, and a
// NoExecute one (before or after) enqueues the consumers of the claims
// it selects; status-only updates do nothing.
func TestRuleHandler(t *testing.T) {
	h := newHarness(t)
	logger := klog.Background()
	a, b := pod("a", "c"), pod("b", "d")
	h.add(t, claim("c", results(result("gpu-0")), a), claim("d", results(result("gpu-1")), b))

	r := rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0")
	h.ruleChanged(logger, nil, r)
	equalStrings(t, "NoExecute rule added", h.queued(), []string{"pod:ns/a", "rule:r"})

	withStatus := r.DeepCopy()
	withStatus.Status.Conditions = []metav1.Condition{{Type: resourceapi.DeviceTaintConditionEvictionInProgress, Status: metav1.ConditionTrue}}
	withStatus.ResourceVersion = "2"
	h.ruleChanged(logger, r, withStatus)
	equalStrings(t, "status update", h.queued(), nil)

	none := rule("r", resourceapi.DeviceTaintEffectNone, "gpu-0")
	h.ruleChanged(logger, r, none)
	equalStrings(t, "NoExecute to None", h.queued(), []string{"pod:ns/a", "rule:r"})

	h.ruleChanged(logger, nil, rule("n", resourceapi.DeviceTaintEffectNone, ""))
	equalStrings(t, "None rule added", h.queued(), []string{"rule:n"})

	all := rule("all", resourceapi.DeviceTaintEffectNoExecute, "")
	all.Spec.DeviceSelector = &resourceapi.DeviceTaintSelector{Driver: ptr.To(driver)}
	h.ruleChanged(logger, nil, all)
	equalStrings(t, "rule for a whole driver", h.queued(), []string{"pod:ns/a", "pod:ns/b", "rule:all"})

	h.ruleEvictions[all.UID] = 3
	h.ruleChanged(logger, all, nil)
	equalStrings(t, "rule deleted", h.queued(), []string{"pod:ns/a", "pod:ns/b"})
	if _, ok := h.ruleEvictions[all.UID]; ok {
		t.Error("deleted rule's eviction count kept")
	}
}
