package controller

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestBucketRateLimiter(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	b := NewBucketRateLimiter[string](10, 3, clk)
	for i := 0; i < 3; i++ {
		if d := b.When("x"); d != 0 {
			t.Fatalf("token %d of the burst waits %v", i, d)
		}
	}
	// The bucket is empty: the next two wait one and two token intervals.
	if d := b.When("x"); d != 100*time.Millisecond {
		t.Errorf("first over the burst waits %v, want 100ms", d)
	}
	if d := b.When("y"); d != 200*time.Millisecond {
		t.Errorf("second over the burst waits %v, want 200ms", d)
	}
	// After a second, 10 tokens came in: 2 repay the promises, 3 fill the
	// bucket (capped at the burst), the rest is lost.
	clk.SetTime(clk.Now().Add(time.Second))
	for i := 0; i < 3; i++ {
		if d := b.When("x"); d != 0 {
			t.Fatalf("after refill, token %d waits %v", i, d)
		}
	}
	if d := b.When("x"); d != 100*time.Millisecond {
		t.Errorf("over the refilled burst waits %v, want 100ms", d)
	}
	if b.NumRequeues("x") != 0 {
		t.Error("bucket counts requeues")
	}
}
