package controller

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestDeadlinesBegin(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(time.Unix(1000, 0))
	g := NewDeadlines(time.Second, clk)
	if w := g.Begin("a"); w != time.Second {
		t.Fatalf("first wait = %v, want the whole period", w)
	}
	clk.SetTime(clk.Now().Add(300 * time.Millisecond))
	if w := g.Begin("a"); w != 700*time.Millisecond {
		t.Fatalf("wait 300ms in = %v, want the rest of the period", w)
	}
	if w := g.Begin("b"); w != time.Second {
		t.Fatalf("another key's first wait = %v, want the whole period", w)
	}
	clk.SetTime(clk.Now().Add(700 * time.Millisecond))
	if w := g.Begin("a"); w != 0 {
		t.Fatalf("wait when the period is over = %v, want 0", w)
	}
	g.Forget("a")
	if w := g.Begin("a"); w != time.Second {
		t.Fatalf("wait after Forget = %v, want a new period", w)
	}
	// A sync that comes back late (a busy queue) takes the step; the hold
	// does not start again.
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if w := g.Begin("a"); w != 0 {
		t.Fatalf("wait long after the hold began = %v, want 0", w)
	}

	off := NewDeadlines(0, clk)
	if w := off.Begin("a"); w != 0 {
		t.Fatalf("period 0: wait = %v, want 0", w)
	}
}
