package deployment

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// gatherer holds back a rolling update's partial scale-downs of old
// ReplicaSets for a short period, so that new replicas becoming available
// in quick succession are answered by one scale-down instead of one each.
//
// Upstream scales the old ReplicaSets down on every sync that finds more
// new replicas available. When they become available a fraction of a
// second apart (pods of one ReplicaSet usually start together), each step
// costs a ReplicaSet update, a ScalingReplicaSet Event, the pod deletions'
// status writes and a Deployment status write, for one pod at a time. The
// sizes of the steps change; the limits do not: a step still takes away
// only what maxUnavailable allows at the moment it is taken, so fewer
// pods may be unavailable than upstream allows, never more. A step that
// finishes the old ReplicaSets is never held back.
type gatherer struct {
	period time.Duration
	clock  clock.PassiveClock

	mu    sync.Mutex
	since map[string]time.Time // keys holding back a step, since when
}

func newGatherer(period time.Duration, clk clock.PassiveClock) *gatherer {
	return &gatherer{period: period, clock: clk, since: map[string]time.Time{}}
}

// wait returns how much longer key's partial step is to be held back, 0
// when it is to be taken now. The first call starts the period. A sync
// that comes back late (a busy queue) takes the step: the hold is
// measured from when the step first became possible, and never restarts
// until done.
func (g *gatherer) wait(key string) time.Duration {
	if g.period <= 0 {
		return 0
	}
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.since[key]
	if !ok {
		g.since[key] = now
		return g.period
	}
	return max(g.period-now.Sub(t), 0)
}

// done ends key's hold: its step was taken, or it has none to take.
func (g *gatherer) done(key string) {
	if g.period <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.since, key)
}
