package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
)

// fastQueue retries at once, so tests do not wait for backoff.
func fastQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond))
}

// runUntil runs the workers until cond holds (or 5s pass) and returns
// only after Run returned.
func runUntil(t *testing.T, w *Workers, n int, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, n); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !cond() {
		t.Fatal("condition not reached")
	}
}

func TestWorkersRetryTransientErrorsUntilSuccess(t *testing.T) {
	var calls atomic.Int32
	w := &Workers{Name: "t", Queue: fastQueue(), Sync: func(context.Context, string) error {
		if calls.Add(1) < 3 {
			return errors.New("transient")
		}
		return nil
	}}
	w.Queue.Add("k")
	runUntil(t, w, 2, func() bool { return calls.Load() >= 3 })
	if w.Queue.NumRequeues("k") != 0 {
		t.Errorf("key not forgotten after success")
	}
}

func TestWorkersDropPermanentErrorsAndRecoverPanics(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	w := &Workers{Name: "t", Queue: fastQueue(), Sync: func(_ context.Context, key string) error {
		mu.Lock()
		seen[key]++
		mu.Unlock()
		switch key {
		case "permanent":
			return Permanent(errors.New("user error"))
		case "panic":
			panic("boom")
		}
		return nil
	}}
	w.MaxRetries = 3
	for _, k := range []string{"permanent", "panic", "ok"} {
		w.Queue.Add(k)
	}
	runUntil(t, w, 1, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["panic"] >= 4 && seen["ok"] == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if seen["permanent"] != 1 {
		t.Errorf("permanent error synced %d times, want 1", seen["permanent"])
	}
	// A panicking key is retried like an error, then dropped after MaxRetries.
	if seen["panic"] != 4 {
		t.Errorf("panicking key synced %d times, want 1 + 3 retries", seen["panic"])
	}
}

func TestPermanentWrapsAndUnwraps(t *testing.T) {
	base := errors.New("bad")
	if err := Permanent(base); !IsPermanent(err) || !errors.Is(err, base) {
		t.Errorf("Permanent(%v) = %v", base, err)
	}
	if Permanent(nil) != nil || IsPermanent(base) {
		t.Error("nil or plain errors are not permanent")
	}
}

type catchingUp struct{}

func (catchingUp) Error() string  { return "cache behind" }
func (catchingUp) ExpectedRetry() {}

// An ExpectedRetry is retried like any error but reported as an error only
// once the key has been retried quietRetries times.
func TestWorkersReportExpectedRetriesOnlyWhenStuck(t *testing.T) {
	var reported atomic.Int32
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) { reported.Add(1) }}
	defer func() { utilruntime.ErrorHandlers = saved }()

	const failures = quietRetries + 5
	var calls atomic.Int32
	w := &Workers{Name: "t", Queue: fastQueue(), Sync: func(context.Context, string) error {
		if calls.Add(1) <= failures {
			return fmt.Errorf("sync: %w", catchingUp{})
		}
		return nil
	}}
	w.Queue.Add("k")
	runUntil(t, w, 1, func() bool { return calls.Load() > failures })
	if got := reported.Load(); got != failures-quietRetries {
		t.Errorf("%d of %d expected retries reported as errors, want %d", got, failures, failures-quietRetries)
	}
}
