package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// QueueClock returns the clock a workqueue should be built with: clk when
// it is a fake (tests), else the real clock with shared tickers.
//
// Every named workqueue runs a goroutine on a 500 ms ticker that refreshes
// its unfinished-work metrics, and every delaying queue a 10 s heartbeat
// ticker. With one ticker per queue, a controller manager's 50-odd queues
// wake the process about 110 times a second at different instants, each a
// thread woken from sleep: at idle more than half of kcm's wake-ups and
// about 40% of its CPU. With the shared clock, all queues' tickers of
// one period fire together from one timer, so the process wakes twice a
// second for all of them. The period, and so the metrics' freshness, is
// unchanged.
func QueueClock(clk clock.WithTicker) clock.WithTicker {
	if clk == nil {
		return sharedTicks
	}
	if _, real := clk.(clock.RealClock); real {
		return sharedTicks
	}
	return clk
}

var sharedTicks = &tickClock{sources: map[time.Duration]*tickSource{}}

// tickClock is the real clock whose tickers of one period share a timer.
type tickClock struct {
	clock.RealClock
	mu      sync.Mutex
	sources map[time.Duration]*tickSource
}

func (c *tickClock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("non-positive interval for NewTicker")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	src := c.sources[d]
	if src == nil {
		src = &tickSource{period: d, subs: map[*sharedTicker]struct{}{}}
		c.sources[d] = src
	}
	return src.subscribe()
}

// tickSource runs one time.Ticker while it has subscribers and hands each
// tick to all of them. As with time.Ticker, a subscriber that has not taken
// the last tick misses the next.
type tickSource struct {
	period time.Duration
	mu     sync.Mutex
	subs   map[*sharedTicker]struct{}
	stop   chan struct{}
}

func (s *tickSource) subscribe() *sharedTicker {
	t := &sharedTicker{src: s, c: make(chan time.Time, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[t] = struct{}{}
	if s.stop == nil {
		s.stop = make(chan struct{})
		go s.run(s.stop)
	}
	return t
}

func (s *tickSource) unsubscribe(t *sharedTicker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[t]; !ok {
		return
	}
	delete(s.subs, t)
	if len(s.subs) == 0 {
		close(s.stop)
		s.stop = nil
	}
}

func (s *tickSource) run(stop chan struct{}) {
	tk := time.NewTicker(s.period)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tk.C:
			s.mu.Lock()
			for t := range s.subs {
				select {
				case t.c <- now:
				default:
				}
			}
			s.mu.Unlock()
		}
	}
}

type sharedTicker struct {
	src *tickSource
	c   chan time.Time
}

func (t *sharedTicker) C() <-chan time.Time { return t.c }

func (t *sharedTicker) Stop() { t.src.unsubscribe(t) }
