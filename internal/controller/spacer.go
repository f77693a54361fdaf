package controller

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Spacer spaces out the status writes that a burst of informer events
// causes for one key. When an owner's pods become ready one after another,
// upstream syncs the owner for each and writes its status each time; every
// write is a request, a watch event for every watcher, and a sync of the
// owner's owner. A Spacer lets the first event after a quiet period sync
// at once (a lone change is not delayed) and delays the syncs that follow
// a write until period has passed since it, so that the changes of the
// burst are written together. The final status is the same; only
// intermediate ones are skipped.
//
// A controller uses it two ways: Add for events that change nothing but
// status (creations, deletions and ownership changes must be synced at
// once, since expectations and adoption wait on them), and Delay in its
// sync, to hold back a write that only reports progress (progressOnly)
// and does not reach the goal (settled). It is Deadlines restarted at
// every write.
type Spacer struct{ d *Deadlines }

// NewSpacer returns a Spacer of period; period 0 enqueues every key at once.
func NewSpacer(period time.Duration, clk clock.PassiveClock) *Spacer {
	return &Spacer{d: NewDeadlines(period, clk)}
}

// Wrote records that key's sync has just written.
func (s *Spacer) Wrote(key string) { s.d.Restart(key) }

// Add enqueues key now if it did not write within the period, else when
// the period since its last write ends.
func (s *Spacer) Add(q workqueue.TypedDelayingInterface[string], key string) {
	if d := s.Delay(key); d > 0 {
		q.AddAfter(key, d)
		return
	}
	q.Add(key)
}

// Delay returns how long key must wait before its next write: the rest of
// the period since its last one, or 0.
func (s *Spacer) Delay(key string) time.Duration { return s.d.Left(key) }

// Forget drops what is known of key (its object is gone).
func (s *Spacer) Forget(key string) { s.d.Forget(key) }
