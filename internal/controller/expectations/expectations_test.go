package expectations

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/internal/controller"
)

func TestExpectations(t *testing.T) {
	tests := []struct {
		name string
		// act runs against key "ns/rs" on a clock starting at t0.
		act  func(e *Expectations, clk *testingclock.FakeClock)
		want bool
	}{
		{name: "no expectations", act: func(*Expectations, *testingclock.FakeClock) {}, want: true},
		{name: "creations outstanding", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 2)
			e.CreationObserved(logger, key)
		}, want: false},
		{name: "creations observed", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 2)
			e.CreationObserved(logger, key)
			e.CreationObserved(logger, key)
		}, want: true},
		{name: "more observed than expected", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectDeletions(logger, key, 1)
			e.DeletionObserved(logger, key)
			e.DeletionObserved(logger, key)
		}, want: true},
		{name: "set replaces", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 5)
			e.ExpectDeletions(logger, key, 1)
			e.DeletionObserved(logger, key)
		}, want: true},
		{name: "raise and lower", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.SetExpectations(logger, key, 1, 1)
			e.RaiseExpectations(logger, key, 1, 0)
			e.LowerExpectations(logger, key, 1, 1)
		}, want: false},
		{name: "not yet expired", act: func(e *Expectations, clk *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 1)
			clk.Step(Timeout)
		}, want: false},
		{name: "expired", act: func(e *Expectations, clk *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 1)
			clk.Step(Timeout + time.Nanosecond)
		}, want: true},
		{name: "set restarts expiry", act: func(e *Expectations, clk *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 1)
			clk.Step(Timeout)
			e.ExpectCreations(logger, key, 1)
			clk.Step(time.Second)
		}, want: false},
		{name: "deleted", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 1)
			e.DeleteExpectations(logger, key)
		}, want: true},
		{name: "observing other keys", act: func(e *Expectations, _ *testingclock.FakeClock) {
			e.ExpectCreations(logger, key, 1)
			e.CreationObserved(logger, "ns/other")
		}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1000, 0))
			e := New(clk)
			tc.act(e, clk)
			if got := e.SatisfiedExpectations(logger, key); got != tc.want {
				add, del, ok := e.GetExpectations(key)
				t.Errorf("SatisfiedExpectations = %v, want %v (add=%d del=%d exists=%v)", got, tc.want, add, del, ok)
			}
		})
	}
}

var logger = klog.Background()

const key = "ns/rs"

func TestUIDTrackingCountsEachDeletionOnce(t *testing.T) {
	u := NewUIDTracking(nil)
	u.ExpectDeletions(logger, key, []string{"ns/a", "ns/b"})
	// The update setting deletionTimestamp and the final delete of a.
	u.DeletionObserved(logger, key, "ns/a")
	u.DeletionObserved(logger, key, "ns/a")
	// A pod the controller did not delete.
	u.DeletionObserved(logger, key, "ns/c")
	if u.SatisfiedExpectations(logger, key) {
		t.Fatal("satisfied before b was observed")
	}
	if got := u.GetUIDs(key); got.Len() != 1 || !got.Has("ns/b") {
		t.Errorf("GetUIDs = %v, want [ns/b]", got)
	}
	u.DeletionObserved(logger, key, "ns/b")
	if !u.SatisfiedExpectations(logger, key) {
		t.Fatal("not satisfied after all deletions were observed")
	}
	u.CreationObserved(logger, key) // the embedded counters keep working
	u.DeleteExpectations(logger, key)
	if u.GetUIDs(key) != nil {
		t.Error("UIDs kept after DeleteExpectations")
	}
	if _, _, ok := u.GetExpectations(key); ok {
		t.Error("expectations kept after DeleteExpectations")
	}
}

type fakeStore string

func (f fakeStore) LastStoreSyncResourceVersion() string { return string(f) }

func TestConsistency(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	rss := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	owner := types.NamespacedName{Namespace: "ns", Name: "rs"}
	tests := []struct {
		name      string
		stores    map[schema.GroupResource]SyncedVersioner
		act       func(c *Consistency)
		wantStale bool
	}{
		{name: "nothing written", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("5")}, act: func(*Consistency) {}},
		{name: "cache behind", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("5")},
			act: func(c *Consistency) { c.WroteAt(owner, "u1", pods, "6") }, wantStale: true},
		{name: "cache caught up", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("6")},
			act: func(c *Consistency) { c.WroteAt(owner, "u1", pods, "6") }},
		{name: "newest write counts", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("7")},
			act: func(c *Consistency) {
				c.WroteAt(owner, "u1", pods, "9")
				c.WroteAt(owner, "u1", pods, "6")
			}, wantStale: true},
		{name: "one resource behind", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("7"), rss: fakeStore("3")},
			act: func(c *Consistency) {
				c.WroteAt(owner, "u1", pods, "6")
				c.WroteAt(owner, "u1", rss, "4")
			}, wantStale: true},
		{name: "no store for resource", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("1")},
			act: func(c *Consistency) { c.WroteAt(owner, "u1", rss, "6") }},
		{name: "store knows no version", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("")},
			act: func(c *Consistency) { c.WroteAt(owner, "u1", pods, "6") }},
		{name: "cleared", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("1")},
			act: func(c *Consistency) {
				c.WroteAt(owner, "u1", pods, "6")
				c.Clear(owner, "")
			}},
		{name: "clear of another uid", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("1")},
			act: func(c *Consistency) {
				c.WroteAt(owner, "u1", pods, "6")
				c.Clear(owner, "u2")
			}, wantStale: true},
		{name: "new uid replaces", stores: map[schema.GroupResource]SyncedVersioner{pods: fakeStore("5")},
			act: func(c *Consistency) {
				c.WroteAt(owner, "u1", pods, "9")
				c.WroteAt(owner, "u2", pods, "4")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConsistency(tc.stores)
			tc.act(c)
			err := c.EnsureReady(owner)
			var stale *StaleCacheError
			if got := errors.As(err, &stale); got != tc.wantStale {
				t.Fatalf("EnsureReady = %v, want stale %v", err, tc.wantStale)
			}
			// The worker loop requeues a stale cache quietly.
			var quiet controller.ExpectedRetry
			if got := errors.As(err, &quiet); got != tc.wantStale {
				t.Errorf("EnsureReady = %v is an ExpectedRetry: %v, want %v", err, got, tc.wantStale)
			}
			if err == nil && len(c.writes) != 0 {
				t.Error("writes kept after the cache caught up")
			}
		})
	}
	var disabled *Consistency
	disabled.WroteAt(owner, "u", pods, "1")
	disabled.Clear(owner, "")
	if err := disabled.EnsureReady(owner); err != nil {
		t.Errorf("nil Consistency: %v", err)
	}
}

func TestPendingCreations(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	e := New(clk)
	if e.PendingCreations(key) {
		t.Error("no expectations: creations pending")
	}
	e.ExpectDeletions(logger, key, 2)
	if e.PendingCreations(key) {
		t.Error("deletions only: creations pending")
	}
	e.ExpectCreations(logger, key, 2)
	e.CreationObserved(logger, key)
	if !e.PendingCreations(key) {
		t.Error("one of two creations observed: none pending")
	}
	clk.Step(Timeout + time.Nanosecond)
	if e.PendingCreations(key) {
		t.Error("expired creations still pending")
	}
	e.ExpectCreations(logger, key, 1)
	e.CreationObserved(logger, key)
	if e.PendingCreations(key) {
		t.Error("every creation observed: still pending")
	}
}
