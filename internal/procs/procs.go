package procs

import (
	"context"
	"math"
	"runtime"
	"time"

	"k8s.io/klog/v2"
)

const (
	// Period is how often the Governor measures demand.
	Period = time.Second
	// headroom is the share of a P the Governor plans to use: demand of
	// 0.9 CPUs or less keeps one P, up to 1.8 two, and so on. A second P
	// is added when the ones there are nearly saturated, not before: at
	// 0.6, bursts of the 500-QPS jobs and volumes benchmark phases held
	// two Ps for most of the phase, and their spinning cost 10-20% of the
	// process's CPU with no gain in wall time there (docs/ARCHITECTURE.md,
	// "Performance devices").
	headroom = 0.9
	// settle is how many periods in a row demand must stay below the
	// current size before the Governor lowers it.
	settle = 10
)

// Governor adjusts GOMAXPROCS between 1 and Max from the CPU time the
// process used in each Period: up at once, down after settle periods.
type Governor struct {
	// Max is the most Ps it sets, and the size it starts from.
	Max int
	// CPUTime returns the process's cumulative CPU time (user and system).
	CPUTime func() time.Duration
	// Set changes GOMAXPROCS.
	Set func(int)

	cur, below int
	last       time.Duration
}

// New returns a Governor over the runtime's current GOMAXPROCS, or nil
// when there is nothing to adjust (one CPU, or no way to read CPU time).
func New() *Governor {
	max := runtime.GOMAXPROCS(0)
	if max <= 1 || cpuTime == nil {
		return nil
	}
	return &Governor{Max: max, CPUTime: cpuTime, Set: func(n int) { runtime.GOMAXPROCS(n) }}
}

// Run adjusts GOMAXPROCS every Period until ctx is done, then restores Max.
func (g *Governor) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	g.cur, g.last = g.Max, g.CPUTime()
	ticker := time.NewTicker(Period)
	defer ticker.Stop()
	defer g.Set(g.Max)
	prev := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			// A late tick covers more time: demand is per second elapsed.
			if n, changed := g.step(now.Sub(prev)); changed {
				logger.V(4).Info("Adjusted GOMAXPROCS to CPU demand", "gomaxprocs", n)
			}
			prev = now
		}
	}
}

// step reads the CPU time used over the last elapsed and sets the size
// the demand calls for; it returns the size and whether it changed.
func (g *Governor) step(elapsed time.Duration) (int, bool) {
	if elapsed <= 0 {
		return g.cur, false
	}
	now := g.CPUTime()
	demand := float64(now-g.last) / float64(elapsed)
	g.last = now
	want := min(g.Max, max(1, int(math.Ceil(demand/headroom))))
	switch {
	case want > g.cur:
		g.below = 0
	case want < g.cur:
		if g.below++; g.below < settle {
			return g.cur, false
		}
		g.below = 0
	default:
		g.below = 0
		return g.cur, false
	}
	g.cur = want
	g.Set(want)
	return want, true
}
