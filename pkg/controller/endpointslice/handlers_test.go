package endpointslice

import (
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

func TestPodEventsEnqueueSelectingServices(t *testing.T) {
	h := newHarness(t, 100)
	h.c.batch = 0
	h.add(service("web"), service("db"))
	h.c.onPod(klog.FromContext(h.ctx), nil, pod("a", "web", "n1", "10.0.0.1"))
	if got := h.c.queue.Len(); got != 1 {
		t.Fatalf("queue %d", got)
	}
	key, _ := h.c.queue.Get()
	if key != "ns/web" {
		t.Errorf("key %q", key)
	}
	h.c.queue.Done(key)
}

func TestSliceEventsOfOwnWritesIgnored(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	h.mustSync("web")
	s := h.apiSlices()[0]
	h.c.onSliceAdd(s)
	h.c.onSliceUpdate(klog.FromContext(h.ctx), s, s)
	if h.c.queue.Len() != 0 {
		t.Fatal("own write enqueued the Service")
	}
	// Someone else edits it: synced after at least a second.
	edited := s.DeepCopy()
	edited.Generation++
	h.c.onSliceUpdate(klog.FromContext(h.ctx), s, edited)
	deadline := time.Now().Add(5 * time.Second)
	for h.c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if h.c.queue.Len() != 1 {
		t.Fatal("foreign edit not synced")
	}
	// A slice of another manager changes nothing.
	other := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x", Labels: map[string]string{
		discovery.LabelServiceName: "db", discovery.LabelManagedBy: "else",
	}}}
	h.c.onSliceAdd(other)
	h.c.onSliceDelete(other)
}

// A pod change right after a write of the Service's slices waits for the
// write spacing; the first after a quiet period does not. A batch period
// replaces the spacing.
func TestPodChangesAfterAWriteAreSpaced(t *testing.T) {
	h := newHarness(t, 100)
	h.c.spacer = endpointutil.NewWriteSpacer(0, 300*time.Millisecond)
	h.c.reconciler.spacer = h.c.spacer
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	logger := klog.FromContext(h.ctx)
	h.c.onPod(logger, nil, pod("a", "web", "n1", "10.0.0.1"))
	if h.c.queue.Len() != 1 {
		t.Fatal("the first change after a quiet period was not queued at once")
	}
	key, _ := h.c.queue.Get()
	h.c.queue.Done(key)
	h.mustSync("web") // writes the slice
	start := time.Now()
	h.c.onPod(logger, nil, pod("b", "web", "n1", "10.0.0.2"))
	if h.c.queue.Len() != 0 {
		t.Fatal("a change right after a write was queued at once")
	}
	deadline := start.Add(5 * time.Second)
	for h.c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if h.c.queue.Len() != 1 || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("queued after %v (len %d), want after the spacing", time.Since(start), h.c.queue.Len())
	}
}
