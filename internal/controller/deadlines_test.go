package controller

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestDeadlines(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(time.Unix(1000, 0))
	d := NewDeadlines(time.Second, clk)
	if l := d.Left("a"); l != 0 {
		t.Fatalf("left of a key never restarted = %v, want 0", l)
	}
	d.Restart("a")
	clk.SetTime(clk.Now().Add(300 * time.Millisecond))
	if l := d.Left("a"); l != 700*time.Millisecond {
		t.Fatalf("left 300ms in = %v, want 700ms", l)
	}
	d.Restart("a")
	if l := d.Left("a"); l != time.Second {
		t.Fatalf("left after a restart = %v, want the whole period", l)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if l := d.Left("a"); l != 0 || d.len() != 0 {
		t.Fatalf("left after the period = %v with %d kept, want 0 and the key forgotten", l, d.len())
	}
	d.Restart("b")
	d.Forget("b")
	if l := d.Left("b"); l != 0 {
		t.Fatalf("left of a forgotten key = %v", l)
	}
	off := NewDeadlines(0, clk)
	off.Restart("x")
	if l := off.Left("x"); l != 0 {
		t.Fatalf("period 0: left = %v", l)
	}
}
