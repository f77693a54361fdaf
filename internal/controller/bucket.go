package controller

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// BucketRateLimiter is an overall token bucket for a workqueue: qps tokens
// a second, at most burst saved up, every item taking one; When returns how
// long the item must wait for its token. It is what client-go's
// BucketRateLimiter does with golang.org/x/time/rate, which kcm may not
// import; upstream's namespace controller combines one with its own
// per-item backoff (see DefaultTypedControllerRateLimiter for the rest).
type BucketRateLimiter[T comparable] struct {
	qps   float64
	burst float64
	clock clock.PassiveClock

	mu     sync.Mutex
	tokens float64 // may go negative: tokens already promised
	last   time.Time
}

// NewBucketRateLimiter returns a full bucket.
func NewBucketRateLimiter[T comparable](qps float64, burst int, c clock.PassiveClock) *BucketRateLimiter[T] {
	if c == nil {
		c = clock.RealClock{}
	}
	return &BucketRateLimiter[T]{qps: qps, burst: float64(burst), clock: c, tokens: float64(burst), last: c.Now()}
}

var _ workqueue.TypedRateLimiter[string] = &BucketRateLimiter[string]{}

// When takes a token and returns the wait until it is available.
func (b *BucketRateLimiter[T]) When(T) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.qps)
		b.last = now
	}
	b.tokens--
	if b.tokens >= 0 || b.qps <= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.qps * float64(time.Second))
}

// NumRequeues is always 0: the bucket does not count per item.
func (b *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// Forget does nothing: the bucket does not track items.
func (b *BucketRateLimiter[T]) Forget(T) {}
