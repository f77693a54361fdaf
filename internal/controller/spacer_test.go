package controller

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

func TestSpacer(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: clk})
	defer q.ShutDown()
	s := NewSpacer(time.Second, clk)

	s.Add(q, "a") // never wrote: at once
	if q.Len() != 1 {
		t.Fatalf("a key that never wrote was not enqueued at once")
	}
	key, _ := q.Get()
	q.Done(key)

	s.Wrote("a")
	clk.Step(300 * time.Millisecond)
	s.Add(q, "a") // wrote 300ms ago: after 700ms
	s.Add(q, "b") // another key is not delayed
	if q.Len() != 1 {
		t.Fatalf("queue length %d, want 1 (b only)", q.Len())
	}
	if got, _ := q.Get(); got != "b" {
		t.Fatalf("got %q, want b", got)
	}
	q.Done("b")
	if d := s.Delay("a"); d != 700*time.Millisecond {
		t.Fatalf("delay of a = %v, want 700ms", d)
	}
	clk.Step(700 * time.Millisecond)
	if !waitLen(q, 1) {
		t.Fatal("a was not enqueued when its period ended")
	}
	if d := s.Delay("a"); d != 0 || s.len() != 0 {
		t.Fatalf("delay after the period = %v with %d keys kept, want 0 and the key forgotten", d, s.len())
	}
	s.Wrote("a")
	clk.Step(300 * time.Millisecond)
	s.Wrote("a")
	if d := s.Delay("a"); d != time.Second {
		t.Fatalf("delay after a second write = %v, want the whole period", d)
	}

	s.Wrote("c")
	s.Forget("c")
	if d := s.Delay("c"); d != 0 {
		t.Fatalf("delay of a forgotten key = %v", d)
	}

	off := NewSpacer(0, clk)
	off.Wrote("x")
	if d := off.Delay("x"); d != 0 {
		t.Fatalf("period 0 delayed by %v", d)
	}
}

func TestSpacerForgetsStaleKeys(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := NewSpacer(time.Second, clk)
	for i := 0; i < 2000; i++ {
		s.Wrote(string(rune('a'+i%26)) + time.Duration(i).String())
		if i == 999 {
			clk.Step(2 * time.Second)
		}
	}
	if n := s.len(); n > 1100 {
		t.Fatalf("%d keys kept, want the stale ones dropped", n)
	}
}

func waitLen(q workqueue.TypedDelayingInterface[string], n int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func TestSpacerSweepsLessOftenWhenManyKeysAreFresh(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := NewSpacer(time.Second, clk)
	for i := 0; i < 5000; i++ {
		s.Wrote(time.Duration(i).String())
	}
	// Every key is fresh: all are kept, and the next sweep waits for the
	// map to double rather than running on every write.
	if s.len() != 5000 {
		t.Fatalf("%d keys kept, want 5000", s.len())
	}
	if s.sweepAt <= s.len() {
		t.Fatalf("next sweep at %d keys with %d kept: it would sweep on every write", s.sweepAt, s.len())
	}
}
