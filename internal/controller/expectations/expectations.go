package expectations

import (
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Timeout is how long a controller waits for the creations and deletions it
// expects before it syncs anyway. Upstream's ExpectationsTimeout.
const Timeout = 5 * time.Minute

// counts is what one controller key waits for.
type counts struct {
	add, del int64
	// set is when the expectations were set; they expire Timeout later.
	set time.Time
}

func (c *counts) fulfilled() bool { return c.add <= 0 && c.del <= 0 }

// Expectations maps controller keys (namespace/name) to the number of
// creations and deletions each still expects to observe. It is safe for
// concurrent use. Keys must not be shared between controllers of different
// kinds.
type Expectations struct {
	clock clock.PassiveClock

	mu      sync.Mutex
	entries map[string]*counts
}

// New returns empty expectations that tell time with clk (a real clock if
// nil).
func New(clk clock.PassiveClock) *Expectations {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Expectations{clock: clk, entries: map[string]*counts{}}
}

// GetExpectations returns the outstanding creations and deletions of key,
// and whether key has expectations at all.
func (e *Expectations) GetExpectations(key string) (add, del int64, exists bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.entries[key]
	if !ok {
		return 0, 0, false
	}
	return c.add, c.del, true
}

// SatisfiedExpectations reports whether key may be synced: it has no
// expectations, they are fulfilled, or they expired.
func (e *Expectations) SatisfiedExpectations(logger klog.Logger, key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.entries[key]
	switch {
	case !ok:
		logger.V(4).Info("Controller either never recorded expectations, or the ttl expired", "controller", key)
		return true
	case c.fulfilled():
		logger.V(4).Info("Controller expectations fulfilled", "controller", key, "add", c.add, "del", c.del)
		return true
	case e.clock.Since(c.set) > Timeout:
		logger.V(4).Info("Controller expectations expired", "controller", key, "add", c.add, "del", c.del)
		return true
	default:
		logger.V(4).Info("Controller still waiting on expectations", "controller", key, "add", c.add, "del", c.del)
		return false
	}
}

// PendingCreations reports whether key still expects creations that have
// neither been observed nor expired.
func (e *Expectations) PendingCreations(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.entries[key]
	return ok && c.add > 0 && e.clock.Since(c.set) <= Timeout
}

// DeleteExpectations forgets key, e.g. when its object was deleted, so that
// a new object of the same name starts clean.
func (e *Expectations) DeleteExpectations(logger klog.Logger, key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.entries, key)
}

// SetExpectations replaces the expectations of key and restarts their
// expiry.
func (e *Expectations) SetExpectations(logger klog.Logger, key string, add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entries[key] = &counts{add: int64(add), del: int64(del), set: e.clock.Now()}
	logger.V(4).Info("Setting expectations", "controller", key, "add", add, "del", del)
}

// ExpectCreations sets key to expect n creations and no deletions.
func (e *Expectations) ExpectCreations(logger klog.Logger, key string, n int) {
	e.SetExpectations(logger, key, n, 0)
}

// ExpectDeletions sets key to expect n deletions and no creations.
func (e *Expectations) ExpectDeletions(logger klog.Logger, key string, n int) {
	e.SetExpectations(logger, key, 0, n)
}

// RaiseExpectations adds to the outstanding counts of key, if it has
// expectations.
func (e *Expectations) RaiseExpectations(logger klog.Logger, key string, add, del int) {
	e.adjust(logger, key, int64(add), int64(del))
}

// LowerExpectations subtracts from the outstanding counts of key, if it has
// expectations. Counts may go below zero, which still means fulfilled.
func (e *Expectations) LowerExpectations(logger klog.Logger, key string, add, del int) {
	e.adjust(logger, key, -int64(add), -int64(del))
}

// CreationObserved records that one expected creation was seen.
func (e *Expectations) CreationObserved(logger klog.Logger, key string) {
	e.adjust(logger, key, -1, 0)
}

// DeletionObserved records that one expected deletion was seen.
func (e *Expectations) DeletionObserved(logger klog.Logger, key string) {
	e.adjust(logger, key, 0, -1)
}

func (e *Expectations) adjust(logger klog.Logger, key string, add, del int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.entries[key]
	if !ok {
		return
	}
	c.add += add
	c.del += del
	logger.V(4).Info("Adjusted expectations", "controller", key, "add", c.add, "del", c.del)
}
