package nodelifecycle

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// waitUntil polls cond until it holds or five seconds pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTaintLoopSleepsWhileQueuesEmpty: the taint loop keeps a timer only
// while a zone's queue holds a node. A node queued wakes it, the node is
// tainted one period later, and with the queues empty again the loop waits
// without a timer.
func TestTaintLoopSleepsWhileQueuesEmpty(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionTrue, t0.Add(-10*time.Minute)))
	f := newFixture(t, node, newLease("n1", t0.Add(-time.Second), "7"),
		newNode("n2", kubeletConds(v1.ConditionTrue, t0)))
	f.monitor() // registers the zone; n1's lease is still fresh
	if f.c.zones.anyPending() {
		t.Fatal("a node is queued before any went unreachable")
	}

	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.c.taintLoop(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	// The loop's first pass must be over before n1 is queued: a pass while
	// the informer still holds n1 as Ready would drop it from the queue.
	waitUntil(t, "the loop waits for a node", func() bool { return f.c.zones.parks.Load() == 1 })

	// n1's lease expires: the monitor queues it, which wakes the loop onto
	// its period's timer.
	f.clock.Step(51 * time.Second)
	f.keepHealthy("n2")
	f.monitor()
	if !f.c.zones.anyPending() {
		t.Fatal("n1 not queued for tainting")
	}
	f.storedNode("n1") // the informer brings the monitor's status update
	waitUntil(t, "the loop waits one period", f.clock.HasWaiters)
	f.client.ClearActions()
	f.clock.Step(taintingPeriod)
	waitUntil(t, "n1 is tainted", func() bool { return f.countActions("patch", "nodes") == 1 })
	waitUntil(t, "the queue is empty", func() bool { return !f.c.zones.anyPending() })
	// Empty queues: the loop goes back to waiting for a node, not a timer.
	waitUntil(t, "the loop waits for a node again", func() bool { return f.c.zones.parks.Load() == 2 })
	waitUntil(t, "the loop waits without a timer", func() bool { return !f.clock.HasWaiters() })
}
