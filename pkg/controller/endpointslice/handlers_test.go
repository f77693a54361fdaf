package endpointslice

import (
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
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
