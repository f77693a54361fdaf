package tainteviction

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
)

// evictionQueue holds the evictions that are pending or running, keyed by
// pod key, and feeds each key to a delaying workqueue so that a worker picks
// it up when it is due. The map is the truth: a key the workqueue hands out
// that has no due entry is stale (its eviction was cancelled or moved) and is
// ignored, so cancelling needs nothing from the workqueue.
type evictionQueue struct {
	clock clock.PassiveClock
	queue workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	entries map[string]*eviction
}

// eviction is one pod's scheduled deletion.
type eviction struct {
	fireAt  time.Time
	running bool
}

func newEvictionQueue(clk clock.WithTicker, name string) *evictionQueue {
	return &evictionQueue{
		clock: clk,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: controller.QueueClock(clk)}),
		entries: map[string]*eviction{},
	}
}

// schedule arranges for key's eviction at fireAt (now if fireAt is not in
// the future). An eviction already pending or running for key is left as it
// is, deadline included; schedule then returns false.
func (q *evictionQueue) schedule(key string, fireAt time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.entries[key]; ok {
		return false
	}
	q.entries[key] = &eviction{fireAt: fireAt}
	q.queue.AddAfter(key, fireAt.Sub(q.clock.Now()))
	return true
}

// cancel drops key's pending eviction and reports whether there was one. A
// running eviction cannot be stopped; cancel leaves it alone and returns
// false.
func (q *evictionQueue) cancel(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.entries[key]
	if !ok || e.running {
		return false
	}
	delete(q.entries, key)
	return true
}

// pending returns the deadline of key's eviction, pending or running.
func (q *evictionQueue) pending(key string) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.entries[key]
	if !ok {
		return time.Time{}, false
	}
	return e.fireAt, true
}

// start marks key's eviction running and returns its deadline if it is
// due. A key that has no pending eviction is ignored; one that is not due
// yet goes back to the workqueue for the time left.
func (q *evictionQueue) start(key string) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.entries[key]
	if !ok || e.running {
		return time.Time{}, false
	}
	if left := e.fireAt.Sub(q.clock.Now()); left > 0 {
		q.queue.AddAfter(key, left)
		return time.Time{}, false
	}
	e.running = true
	return e.fireAt, true
}

// finish forgets key's eviction once it ran, so that the pod can be
// scheduled again should it still be there.
func (q *evictionQueue) finish(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.entries, key)
}
