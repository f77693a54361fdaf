package tainteviction

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/internal/controller"
)

func TestEvictionQueue(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	q := newEvictionQueue(clk, "")
	t.Cleanup(q.queue.ShutDown)
	const k = "ns/p"

	if !q.schedule(k, t0.Add(2*time.Second)) {
		t.Fatal("schedule of a new key returned false")
	}
	if q.schedule(k, t0) {
		t.Error("schedule replaced a pending eviction")
	}
	if _, due := q.start(k); due {
		t.Error("started an eviction before its deadline")
	}
	clk.Step(2 * time.Second)
	fireAt, due := q.start(k)
	if !due || !fireAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("start at the deadline = (%v, %v), want due at +2s", fireAt.Sub(t0), due)
	}
	if _, due := q.start(k); due {
		t.Error("started a running eviction twice")
	}
	if q.cancel(k) {
		t.Error("cancel stopped a running eviction")
	}
	if q.schedule(k, clk.Now()) {
		t.Error("schedule added to a running eviction")
	}
	q.finish(k)
	if _, ok := q.pending(k); ok {
		t.Error("eviction still known after finish")
	}

	q.schedule(k, clk.Now().Add(time.Minute))
	if !q.cancel(k) {
		t.Error("cancel of a pending eviction returned false")
	}
	if q.cancel(k) {
		t.Error("second cancel returned true")
	}
	if _, due := q.start(k); due {
		t.Error("started a cancelled eviction")
	}
}

// TestEvictionQueueFiresOnTime runs the queue through the shared worker loop
// and moves the fake clock: nothing runs before the deadline, a cancelled
// eviction never runs, and a due one runs once.
func TestEvictionQueueFiresOnTime(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	q := newEvictionQueue(clk, "")
	var mu sync.Mutex
	var ran []string
	syncFn := func(_ context.Context, key string) error {
		if _, due := q.start(key); !due {
			return nil
		}
		defer q.finish(key)
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, key)
		return nil
	}
	ranKeys := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ran...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := controller.Workers{Name: "test", Queue: q.queue, Sync: syncFn}
		w.Run(ctx, 2)
	}()
	defer func() { cancel(); <-done }()

	q.schedule("ns/later", t0.Add(2*time.Second))
	q.schedule("ns/cancelled", t0.Add(time.Second))
	q.cancel("ns/cancelled")

	clk.Step(1500 * time.Millisecond)
	// Bounded: the only way to see that nothing runs early is to give the
	// workers a moment; the deadline is not reached, so none may run.
	time.Sleep(100 * time.Millisecond)
	if got := ranKeys(); len(got) != 0 {
		t.Fatalf("ran %v before any deadline", got)
	}

	// The delaying queue may arm its timer just after a step, so keep
	// stepping in small increments until the eviction runs.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if len(ranKeys()) > 0 {
			return true, nil
		}
		clk.Step(100 * time.Millisecond)
		return false, nil
	})
	if err != nil {
		t.Fatalf("eviction did not run: %v", err)
	}
	if got := ranKeys(); len(got) != 1 || got[0] != "ns/later" {
		t.Errorf("ran %v, want only ns/later", got)
	}
}
