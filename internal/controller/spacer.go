package controller

import (
	"sync"
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
// and does not reach the goal (settled). See docs/ARCHITECTURE.md, "Write
// policies".
//
// A period of 0 (or less) keeps nothing and delays nothing: upstream's
// timing.
type Spacer struct {
	period time.Duration
	clock  clock.PassiveClock

	mu sync.Mutex
	// wrote is, per key, when its last write was.
	wrote map[string]time.Time
	// sweepAt is the size of wrote at which Wrote drops the keys whose
	// period ended; it doubles with what a sweep keeps, so sweeps stay
	// amortized O(1) per call even when more keys than that are within
	// one period.
	sweepAt int
}

const minSweepAt = 1024

// NewSpacer returns a Spacer of period on clk (the real clock if nil).
func NewSpacer(period time.Duration, clk clock.PassiveClock) *Spacer {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Spacer{period: period, clock: clk, wrote: map[string]time.Time{}, sweepAt: minSweepAt}
}

// Wrote records that key's sync has just written.
func (s *Spacer) Wrote(key string) {
	if s.period <= 0 {
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wrote[key] = now
	if len(s.wrote) >= s.sweepAt {
		// Drop the keys that no longer hold anything back, so that keys
		// written once and never again do not accumulate.
		for k, t := range s.wrote {
			if now.Sub(t) >= s.period {
				delete(s.wrote, k)
			}
		}
		s.sweepAt = max(minSweepAt, 2*len(s.wrote))
	}
}

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
// the period since its last one, or 0 (and a period that ended is
// forgotten).
func (s *Spacer) Delay(key string) time.Duration {
	if s.period <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.wrote[key]
	if !ok {
		return 0
	}
	if since := s.clock.Since(t); since < s.period {
		return s.period - since
	}
	delete(s.wrote, key)
	return 0
}

// Forget drops what is known of key (its object is gone).
func (s *Spacer) Forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.wrote, key)
}

// len is the number of keys kept, for tests.
func (s *Spacer) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.wrote)
}
