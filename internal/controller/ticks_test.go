package controller

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestQueueClockKeepsFakes(t *testing.T) {
	fake := testingclock.NewFakeClock(time.Now())
	if got := QueueClock(fake); got != fake {
		t.Errorf("QueueClock(fake) = %T, want the fake", got)
	}
	for _, clk := range []clock.WithTicker{nil, clock.RealClock{}} {
		if got := QueueClock(clk); got != sharedTicks {
			t.Errorf("QueueClock(%T) = %T, want the shared-ticker clock", clk, got)
		}
	}
}

func waitTick(t *testing.T, tk clock.Ticker, what string) time.Time {
	t.Helper()
	select {
	case now := <-tk.C():
		return now
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no tick within 5s", what)
		return time.Time{}
	}
}

func TestSharedTickersFireTogether(t *testing.T) {
	const period = 7 * time.Millisecond
	a := sharedTicks.NewTicker(period)
	b := sharedTicks.NewTicker(period)
	other := sharedTicks.NewTicker(11 * time.Millisecond)
	// Both subscribers of one period get the same tick.
	ta, tb := waitTick(t, a, "a"), waitTick(t, b, "b")
	for !ta.Equal(tb) {
		// One may have taken a tick before the other subscribed.
		if ta.Before(tb) {
			ta = waitTick(t, a, "a")
		} else {
			tb = waitTick(t, b, "b")
		}
	}
	waitTick(t, other, "other period")
	a.Stop()
	a.Stop() // idempotent
	waitTick(t, b, "b after a stopped")
	b.Stop()
	other.Stop()

	sharedTicks.mu.Lock()
	src := sharedTicks.sources[period]
	sharedTicks.mu.Unlock()
	src.mu.Lock()
	running := src.stop != nil
	src.mu.Unlock()
	if running {
		t.Error("the period's timer still runs with no subscriber left")
	}
	// A new subscriber starts it again.
	c := sharedTicks.NewTicker(period)
	defer c.Stop()
	waitTick(t, c, "c after restart")
}

// A workqueue built on the shared clock works as one on the real clock:
// delayed adds come out, shutdown stops its tickers.
func TestQueueOnSharedClock(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "ticks_test", Clock: QueueClock(nil)},
	)
	q.AddAfter("k", 20*time.Millisecond)
	got := make(chan string, 1)
	go func() {
		k, _ := q.Get()
		got <- k
	}()
	select {
	case k := <-got:
		if k != "k" {
			t.Errorf("got %q, want k", k)
		}
		q.Done(k)
	case <-time.After(5 * time.Second):
		t.Fatal("delayed key not delivered within 5s")
	}
	q.ShutDown()
}
