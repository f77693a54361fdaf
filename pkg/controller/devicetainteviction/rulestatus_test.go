package devicetainteviction

import (
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

const noEffectTail = "if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update."

// syncRule runs the rule's status sync and returns the condition the
// fake API server holds afterwards (zero if none).
func (h *harness) syncRule(t *testing.T, name string) metav1.Condition {
	t.Helper()
	if err := h.syncRuleStatus(h.ctx, name); err != nil {
		t.Fatalf("syncRuleStatus: %v", err)
	}
	r, err := h.client.ResourceV1().DeviceTaintRules().Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Status.Conditions {
		if c.Type == resourceapi.DeviceTaintConditionEvictionInProgress {
			return c
		}
	}
	return metav1.Condition{}
}

// observe copies the rule as the API server holds it into the cache.
func (h *harness) observe(t *testing.T, name string) {
	t.Helper()
	r, err := h.client.ResourceV1().DeviceTaintRules().Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.update(t, r)
}

func checkCondition(t *testing.T, got metav1.Condition, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	if got.Status != status || got.Reason != reason || got.Message != message || got.ObservedGeneration != 1 {
		t.Errorf("condition %s/%s %q (generation %d), want %s/%s %q (generation 1)",
			got.Status, got.Reason, got.Message, got.ObservedGeneration, status, reason, message)
	}
}

// TestRuleStatusEviction: a NoExecute rule reports its pending pod, keeps
// the condition for ruleStatusPeriod, then reports the eviction done.
func TestRuleStatusEviction(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0")), claim("c", results(result("gpu-0")), p), p, rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0"))

	got := h.syncRule(t, "r")
	checkCondition(t, got, metav1.ConditionTrue, "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")
	if !got.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("lastTransitionTime %s, want %s", got.LastTransitionTime, t0)
	}
	h.observe(t, "r")

	h.client.ClearActions()
	h.syncPod(t, "p")
	equalStrings(t, "eviction requests", h.writes(), []string{"get pods", "patch pods/status", "delete pods"})
	terminating := p.DeepCopy()
	terminating.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	h.update(t, terminating)

	// Too early: no write.
	h.clock.Step(5 * time.Second)
	h.syncRule(t, "r")
	for _, w := range h.writes() {
		if w == "patch devicetaintrules/status" {
			t.Errorf("status written within %s of the last update", ruleStatusPeriod)
		}
	}

	h.clock.Step(5 * time.Second)
	got = h.syncRule(t, "r")
	checkCondition(t, got, metav1.ConditionFalse, "Completed", "1 pod evicted since starting the controller.")
	if !got.LastTransitionTime.Time.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("lastTransitionTime %s, want %s", got.LastTransitionTime, t0.Add(10*time.Second))
	}
}

// TestRuleStatusConditions: the condition for each effect, as upstream
// words it.
func TestRuleStatusConditions(t *testing.T) {
	a, b := pod("a", "c"), pod("b", "d")
	forever := toleration(resourceapi.DeviceTaintEffectNoExecute, nil)
	tests := []struct {
		name    string
		objs    []runtime.Object
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{name: "NoExecute, no pods", objs: []runtime.Object{slice("s", 1, device("gpu-0")), rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0")},
			status: metav1.ConditionFalse, reason: "NotStarted"},
		{name: "NoExecute, tolerated forever", objs: []runtime.Object{slice("s", 1, device("gpu-0")), rule("r", resourceapi.DeviceTaintEffectNoExecute, "gpu-0"),
			claim("c", results(result("gpu-0", forever)), a), a},
			status: metav1.ConditionFalse, reason: "NotStarted"},
		{name: "NoExecute, two pods", objs: []runtime.Object{slice("s", 1, device("gpu-0"), device("gpu-1")), rule("r", resourceapi.DeviceTaintEffectNoExecute, ""),
			claim("c", results(result("gpu-0")), a), claim("d", results(result("gpu-1")), b), a, b},
			status: metav1.ConditionTrue, reason: "PodsPendingEviction", message: "2 pods need to be evicted in 1 namespace."},
		{name: "None", objs: []runtime.Object{slice("s", 1, device("gpu-0"), device("gpu-1")), slice("old", 0, device("gpu-7")), rule("r", resourceapi.DeviceTaintEffectNone, ""),
			claim("c", results(result("gpu-0")), a), a},
			status: metav1.ConditionFalse, reason: "NoEffect",
			message: "2 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace " + noEffectTail},
		{name: "None, nothing selected", objs: []runtime.Object{rule("r", resourceapi.DeviceTaintEffectNone, "gpu-9")},
			status: metav1.ConditionFalse, reason: "NoEffect",
			message: "0 published devices selected. 0 allocated devices selected. 0 pods would be evicted in 0 different namespaces " + noEffectTail},
		{name: "NoSchedule", objs: []runtime.Object{rule("r", resourceapi.DeviceTaintEffectNoSchedule, "")},
			status: metav1.ConditionFalse, reason: "OtherEffect", message: "Eviction only happens for the NoExecute effect."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.add(t, tt.objs...)
			checkCondition(t, h.syncRule(t, "r"), tt.status, tt.reason, tt.message)

			// Unchanged: not written again.
			h.observe(t, "r")
			h.client.ClearActions()
			h.clock.Step(time.Minute)
			h.syncRule(t, "r")
			for _, w := range h.writes() {
				if w == "patch devicetaintrules/status" {
					t.Error("unchanged condition written again")
				}
			}
		})
	}
}

// TestRuleStatusEvictedCount: the pods evicted because of a rule are
// appended to any reason's message.
func TestRuleStatusEvictedCount(t *testing.T) {
	h := newHarness(t)
	r := rule("r", resourceapi.DeviceTaintEffectNoSchedule, "")
	h.add(t, r)
	h.ruleEvictions[r.UID] = 2
	checkCondition(t, h.syncRule(t, "r"), metav1.ConditionFalse, "OtherEffect",
		"Eviction only happens for the NoExecute effect. 2 pods evicted since starting the controller.")
}
