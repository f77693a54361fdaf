package nodelifecycle

import (
	"container/heap"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// evictionBurst is the burst of every zone's token bucket (upstream's
// EvictionRateLimiterBurst).
const evictionBurst = 1

// queuedNode is a node waiting in a zone's taint queue.
type queuedNode struct {
	name      string
	uid       types.UID
	addedAt   time.Time
	processAt time.Time
}

// nodeHeap orders queued nodes by processAt, earliest first.
type nodeHeap []*queuedNode

func (h nodeHeap) Len() int           { return len(h) }
func (h nodeHeap) Less(i, j int) bool { return h[i].processAt.Before(h[j].processAt) }
func (h nodeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nodeHeap) Push(x any)        { *h = append(*h, x.(*queuedNode)) }
func (h *nodeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// taintQueue is a zone's queue of nodes to receive a NoExecute taint,
// behaving as upstream's RateLimitedTimedQueue: a node is handled in
// processAt order and no faster than the zone's token bucket allows, and
// once handled it stays a member, so that it cannot be queued again, until
// Remove is called for it (when the node is Ready again, or its taint has to
// change).
type taintQueue struct {
	clock clock.Clock

	mu      sync.Mutex
	pending nodeHeap
	members sets.Set[string]

	limiterMu sync.Mutex
	limiter   flowcontrol.RateLimiter
	qps       float32
}

// newTaintQueue returns a queue limited to qps with a burst of one. Like
// upstream, a new zone's limiter is a token bucket even for qps 0, which
// then lets exactly one node through.
func newTaintQueue(clk clock.Clock, qps float32) *taintQueue {
	return &taintQueue{
		clock:   clk,
		members: sets.New[string](),
		limiter: flowcontrol.NewTokenBucketRateLimiterWithClock(qps, evictionBurst, clk),
		qps:     qps,
	}
}

// Add queues the node unless it is a member already, and reports whether it
// was added.
func (q *taintQueue) Add(name string, uid types.UID) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.members.Has(name) {
		return false
	}
	now := q.clock.Now()
	heap.Push(&q.pending, &queuedNode{name: name, uid: uid, addedAt: now, processAt: now})
	q.members.Insert(name)
	return true
}

// Remove forgets the node, queued or handled, so that it can be added
// again. It reports whether the node was a member.
func (q *taintQueue) Remove(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.members.Has(name) {
		return false
	}
	q.members.Delete(name)
	q.dropPending(name)
	return true
}

// Len returns the number of nodes waiting to be handled.
func (q *taintQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *taintQueue) dropPending(name string) bool {
	for i, n := range q.pending {
		if n.name == name {
			heap.Remove(&q.pending, i)
			return true
		}
	}
	return false
}

func (q *taintQueue) head() (queuedNode, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return queuedNode{}, false
	}
	return *q.pending[0], true
}

// settle records the outcome of handling n: done keeps it a member but
// takes it off the queue; otherwise it is queued again at n.processAt.
func (q *taintQueue) settle(n queuedNode, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.dropPending(n.name) || done {
		return
	}
	heap.Push(&q.pending, &n)
}

// Try hands due nodes to fn, earliest first, while the limiter grants
// tokens. fn returns whether the node is done, or else how long to wait
// before retrying it. As upstream, a token is spent on every look at the
// queue's head, even one that is not due yet.
func (q *taintQueue) Try(logger klog.Logger, fn func(queuedNode) (bool, time.Duration)) {
	n, ok := q.head()
	q.limiterMu.Lock()
	defer q.limiterMu.Unlock()
	for ok {
		if !q.limiter.TryAccept() {
			logger.V(10).Info("Try rate limited", "node", n.name)
			return
		}
		now := q.clock.Now()
		if now.Before(n.processAt) {
			return
		}
		done, wait := fn(n)
		if !done {
			n.processAt = now.Add(wait + 1)
		}
		q.settle(n, done)
		n, ok = q.head()
	}
}

// SwapLimiter replaces the limiter by one of the given rate, unless the
// rate is the same; a rate of zero or less stops the queue. When the old
// limiter has no token left, the new one starts without one too.
func (q *taintQueue) SwapLimiter(qps float32) {
	q.limiterMu.Lock()
	defer q.limiterMu.Unlock()
	if q.qps == qps {
		return
	}
	var next flowcontrol.RateLimiter
	if qps <= 0 {
		next = flowcontrol.NewFakeNeverRateLimiter()
	} else {
		next = flowcontrol.NewTokenBucketRateLimiterWithClock(qps, evictionBurst, q.clock)
		if !q.limiter.TryAccept() {
			next.TryAccept()
		}
	}
	q.limiter.Stop()
	q.limiter, q.qps = next, qps
}

// QPS returns the queue's current rate.
func (q *taintQueue) QPS() float32 {
	q.limiterMu.Lock()
	defer q.limiterMu.Unlock()
	return q.qps
}
