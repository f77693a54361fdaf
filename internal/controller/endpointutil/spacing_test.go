package endpointutil

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

func TestEnqueuePodChange(t *testing.T) {
	q := workqueue.NewTypedDelayingQueue[string]()
	defer q.ShutDown()
	spaced := NewWriteSpacer(0, time.Hour)
	EnqueuePodChange(q, spaced, "ns/a", 0)
	if q.Len() != 1 {
		t.Fatal("no write yet: not queued at once")
	}
	spaced.Wrote("ns/a")
	EnqueuePodChange(q, spaced, "ns/b", 0)
	EnqueuePodChange(q, spaced, "ns/a", 0)
	if q.Len() != 2 {
		t.Fatalf("len %d: want ns/a once and ns/b, the second ns/a held back", q.Len())
	}
	// A batch period replaces the spacing, for every key.
	batched := NewWriteSpacer(time.Hour, time.Hour)
	batched.Wrote("ns/c")
	if d := batched.Delay("ns/c"); d != 0 {
		t.Errorf("spacing %v with a batch period set", d)
	}
	EnqueuePodChange(q, batched, "ns/d", time.Hour)
	if q.Len() != 2 {
		t.Error("a batched change was queued at once")
	}
}
