package podautoscaler

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// fixedIntervalLimiter delays every re-added key by the same interval: an
// HPA is synced once per sync period, whether its last sync failed or not.
type fixedIntervalLimiter struct{ interval time.Duration }

func fixedInterval(d time.Duration) workqueue.TypedRateLimiter[string] {
	return fixedIntervalLimiter{interval: d}
}

func (l fixedIntervalLimiter) When(string) time.Duration { return l.interval }
func (l fixedIntervalLimiter) NumRequeues(string) int    { return 1 }
func (l fixedIntervalLimiter) Forget(string)             {}
