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

// TestTaintLoopTaintsAQueuedNode: the taint loop passes over the zones'
// queues every taintingPeriod, as upstream's; a queued node is tainted on
// the next pass.
func TestTaintLoopTaintsAQueuedNode(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionTrue, t0.Add(-10*time.Minute)))
	f := newFixture(t, node, newLease("n1", t0.Add(-time.Second), "7"),
		newNode("n2", kubeletConds(v1.ConditionTrue, t0)))
	f.monitor() // registers the zone; n1's lease is still fresh
	// n1's lease expires: the monitor queues it.
	f.clock.Step(51 * time.Second)
	f.keepHealthy("n2")
	f.monitor()
	f.storedNode("n1") // the informer brings the monitor's status update
	f.client.ClearActions()

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
	waitUntil(t, "n1 is tainted", func() bool { return f.countActions("patch", "nodes") == 1 })
	// The loop then waits for its next pass.
	waitUntil(t, "the loop waits for its period", f.clock.HasWaiters)
	f.clock.Step(taintingPeriod)
	waitUntil(t, "the next pass", f.clock.HasWaiters)
	if n := f.countActions("patch", "nodes"); n != 1 {
		t.Fatalf("%d node patches, want 1: the tainted node is not patched again", n)
	}
}
