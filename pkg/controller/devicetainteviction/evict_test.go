package devicetainteviction

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"
)

const (
	markingEvent    = "Normal DeviceTaintManagerEviction Marking for deletion"
	cancellingEvent = "Normal DeviceTaintManagerEviction Cancelling deletion"
)

func (h *harness) syncPod(t *testing.T, name string) {
	t.Helper()
	if err := h.Controller.syncPod(h.ctx, testNS, name); err != nil {
		t.Fatalf("syncPod: %v", err)
	}
}

func (h *harness) pending(name string) (pendingEviction, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.Controller.pending[testNS+"/"+name]
	return p, ok
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// TestEvictNow: an untolerated NoExecute taint evicts the pod at once:
// the Event, the DisruptionTarget condition by a status patch, then the
// deletion, and the metric.
func TestEvictNow(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))), claim("c", results(result("gpu-0")), p), p)
	before, _ := testutil.GetCounterMetricValue(podDeletionsTotal)

	h.syncPod(t, "p")

	equalStrings(t, "requests", h.writes(), []string{"get pods", "patch pods/status", "delete pods"})
	equalStrings(t, "events", h.events(), []string{markingEvent})
	if _, err := h.client.CoreV1().Pods(testNS).Get(h.ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod still there: %v", err)
	}
	if after, _ := testutil.GetCounterMetricValue(podDeletionsTotal); after != before+1 {
		t.Errorf("pod_deletions_total %v, want %v", after, before+1)
	}
	if _, ok := h.pending("p"); ok {
		t.Error("eviction still pending")
	}

	// The cached pod, not yet gone, is not looked at again.
	h.client.ClearActions()
	h.syncPod(t, "p")
	equalStrings(t, "requests after eviction", h.writes(), nil)
}

// TestDisruptionTargetPatch: the status patch carries upstream's
// condition.
func TestDisruptionTargetPatch(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))), claim("c", results(result("gpu-0")), p), p)
	var patched *v1.Pod
	h.client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := h.client.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), testNS, "p")
		if err == nil {
			patched = obj.(*v1.Pod)
		}
		return false, nil, nil
	})
	h.syncPod(t, "p")
	if patched == nil {
		t.Fatal("pod not deleted")
	}
	i := slices.IndexFunc(patched.Status.Conditions, func(c v1.PodCondition) bool { return c.Type == v1.DisruptionTarget })
	if i < 0 {
		t.Fatalf("no DisruptionTarget condition before the deletion: %+v", patched.Status.Conditions)
	}
	c := patched.Status.Conditions[i]
	if c.Status != v1.ConditionTrue || c.Reason != "DeletionByDeviceTaintManager" ||
		c.Message != "Device Taint manager: deleting due to NoExecute taint" || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("condition %+v", c)
	}
}

// TestTolerationSeconds: the eviction waits for the toleration to run
// out, then happens.
func TestTolerationSeconds(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	// Tainted a minute before t0, tolerated for two: due at t0+1m.
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))),
		claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](120)))), p), p)

	h.syncPod(t, "p")
	equalStrings(t, "requests before the deadline", h.writes(), nil)
	if pe, ok := h.pending("p"); !ok || !pe.when.Equal(t0.Add(time.Minute)) {
		t.Errorf("pending %+v %v, want at %s", pe, ok, t0.Add(time.Minute))
	}

	h.clock.Step(59 * time.Second)
	h.syncPod(t, "p")
	equalStrings(t, "requests a second early", h.writes(), nil)

	h.clock.Step(time.Second)
	h.syncPod(t, "p")
	equalStrings(t, "requests at the deadline", h.writes(), []string{"get pods", "patch pods/status", "delete pods"})
	equalStrings(t, "events", h.events(), []string{markingEvent})
}

// TestTaintRemovedBeforeDeadline: the pending eviction is cancelled with
// an Event and nothing is written.
func TestTaintRemovedBeforeDeadline(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))),
		claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](120)))), p), p)
	h.syncPod(t, "p")

	h.update(t, slice("s", 1, device("gpu-0")))
	h.clock.Step(time.Minute)
	h.syncPod(t, "p")

	equalStrings(t, "requests", h.writes(), nil)
	equalStrings(t, "events", h.events(), []string{cancellingEvent})
	if _, ok := h.pending("p"); ok {
		t.Error("eviction still pending")
	}
	// Cancelled once only.
	h.syncPod(t, "p")
	equalStrings(t, "events after the cancellation", h.events(), nil)
}

// TestPodDeletedBeforeDeadline: a pod that goes drops its pending
// eviction without an Event.
func TestPodDeletedBeforeDeadline(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))),
		claim("c", results(result("gpu-0", toleration(resourceapi.DeviceTaintEffectNoExecute, ptr.To[int64](120)))), p), p)
	h.syncPod(t, "p")
	h.remove(t, p)
	h.clock.Step(time.Hour)
	h.syncPod(t, "p")
	equalStrings(t, "requests", h.writes(), nil)
	equalStrings(t, "events", h.events(), nil)
	if _, ok := h.pending("p"); ok {
		t.Error("eviction still pending")
	}
}

// TestNoClaims: a pod without claims, or whose claim is not allocated,
// is left alone.
func TestNoClaims(t *testing.T) {
	h := newHarness(t)
	a, b := pod("a"), pod("b", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))), claim("c", nil, b), a, b)
	h.syncPod(t, "a")
	h.syncPod(t, "b")
	equalStrings(t, "requests", h.writes(), nil)
	equalStrings(t, "events", h.events(), nil)
}

// TestPodReplaced: the pod due for eviction was replaced by another of
// the same name: nothing is deleted.
func TestPodReplaced(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))), claim("c", results(result("gpu-0")), p))
	if err := h.informer(p).GetIndexer().Add(p); err != nil {
		t.Fatal(err)
	}
	other := p.DeepCopy()
	other.UID = "new"
	if err := h.client.Tracker().Add(other); err != nil {
		t.Fatal(err)
	}
	h.syncPod(t, "p")
	equalStrings(t, "requests", h.writes(), []string{"get pods"})
	equalStrings(t, "events", h.events(), nil)
}

// TestAlreadyTerminating: a pod deleted by someone else is not written
// to, and counts as evicted as upstream counts it.
func TestAlreadyTerminating(t *testing.T) {
	h := newHarness(t)
	p := pod("p", "c")
	p.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	h.add(t, slice("s", 1, device("gpu-0", taint(resourceapi.DeviceTaintEffectNoExecute))), claim("c", results(result("gpu-0")), p), p)
	h.syncPod(t, "p")
	equalStrings(t, "requests", h.writes(), nil)
	equalStrings(t, "events", h.events(), nil)
	if !h.wasEvicted(p.UID) {
		t.Error("not recorded as evicted")
	}
}
