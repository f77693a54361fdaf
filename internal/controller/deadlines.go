package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Deadlines keeps, per key, when a period of fixed length began, and
// answers how much of it is left: the keyed deadline under kcm's write
// pacing (docs/ARCHITECTURE.md, "Write policies"). A Spacer restarts a
// key's period at every write and holds the next progress-only write until
// it ends.
//
// A period of 0 (or less) keeps nothing: every key has 0 left, which is
// upstream's timing.
type Deadlines struct {
	period time.Duration
	clock  clock.PassiveClock

	mu    sync.Mutex
	start map[string]time.Time
	// sweepAt is the size of start at which Restart drops the periods
	// that ended; it doubles with what a sweep keeps, so sweeps stay
	// amortized O(1) per call even when more keys than that are within
	// one period.
	sweepAt int
}

const minSweepAt = 1024

// NewDeadlines returns Deadlines of period on clk (the real clock if nil).
func NewDeadlines(period time.Duration, clk clock.PassiveClock) *Deadlines {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Deadlines{period: period, clock: clk, start: map[string]time.Time{}, sweepAt: minSweepAt}
}

// Restart begins key's period now, whether or not one was running.
func (d *Deadlines) Restart(key string) {
	if d.period <= 0 {
		return
	}
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.start[key] = now
	if len(d.start) >= d.sweepAt {
		// Drop the periods that no longer hold anything back, so that keys
		// seen once and never again do not accumulate.
		for k, t := range d.start {
			if now.Sub(t) >= d.period {
				delete(d.start, k)
			}
		}
		d.sweepAt = max(minSweepAt, 2*len(d.start))
	}
}

// Left returns what is left of key's period, 0 when none is running; a
// period that ended is forgotten.
func (d *Deadlines) Left(key string) time.Duration {
	if d.period <= 0 {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.start[key]
	if !ok {
		return 0
	}
	if since := d.clock.Since(t); since < d.period {
		return d.period - since
	}
	delete(d.start, key)
	return 0
}

// Forget drops key's period (its object is gone, or its step was taken).
func (d *Deadlines) Forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.start, key)
}

// len is the number of keys kept, for tests.
func (d *Deadlines) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.start)
}
