package nodelifecycle

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// zoneState is the health of a zone (upstream's names).
type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

// labelExcludeDisruption excludes a node from its zone's health.
const labelExcludeDisruption = "node.kubernetes.io/exclude-disruption"

// zoneKey identifies a node's zone as upstream's GetZoneKey does: region
// and zone, each from its deprecated failure-domain label if present, else
// from its topology label, joined by ":\x00:" (so that a colon in either
// cannot make two zones collide); "" when the node has neither.
func zoneKey(node *v1.Node) string {
	zone, ok := node.Labels[v1.LabelFailureDomainBetaZone]
	if !ok {
		zone = node.Labels[v1.LabelTopologyZone]
	}
	region, ok := node.Labels[v1.LabelFailureDomainBetaRegion]
	if !ok {
		region = node.Labels[v1.LabelTopologyRegion]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// evictionPolicy decides a zone's state and how fast nodes in it get a
// NoExecute taint (--node-eviction-rate and friends).
type evictionPolicy struct {
	evictionQPS            float32
	secondaryEvictionQPS   float32
	largeClusterThreshold  int32
	unhealthyZoneThreshold float32
}

// zoneStateOf returns the number of nodes in a zone that are not Ready and
// the zone's state: FullDisruption when none is Ready, PartialDisruption when
// more than two and at least the unhealthy-zone threshold are not, Normal
// otherwise. A nil condition counts as not Ready.
func (p evictionPolicy) zoneStateOf(ready []*v1.NodeCondition) (int, zoneState) {
	readyNodes, notReady := 0, 0
	for _, c := range ready {
		if c != nil && c.Status == v1.ConditionTrue {
			readyNodes++
		} else {
			notReady++
		}
	}
	switch {
	case readyNodes == 0 && notReady > 0:
		return notReady, stateFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+readyNodes) >= p.unhealthyZoneThreshold:
		return notReady, statePartialDisruption
	default:
		return notReady, stateNormal
	}
}

// qpsFor returns the tainting rate of a zone of zoneSize nodes in state. A
// partially disrupted zone is slowed down to the secondary rate if the zone
// is larger than the large-cluster threshold, and stopped otherwise; a fully
// disrupted one (while others are not) gets the normal rate.
func (p evictionPolicy) qpsFor(state zoneState, zoneSize int) float32 {
	if state == statePartialDisruption {
		if int32(zoneSize) > p.largeClusterThreshold {
			return p.secondaryEvictionQPS
		}
		return 0
	}
	return p.evictionQPS
}

// zones holds the per-zone taint queues. Queues are created on a zone's
// first node and never removed, as upstream.
type zones struct {
	mu     sync.Mutex
	queues map[string]*taintQueue
}

func newZones() zones {
	return zones{queues: map[string]*taintQueue{}}
}

func (z *zones) queue(key string) *taintQueue {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queues[key]
}

func (z *zones) keys() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	keys := make([]string, 0, len(z.queues))
	for k := range z.queues {
		keys = append(keys, k)
	}
	return keys
}

// ensureZone starts tracking the node's zone if it is new. Only the monitor
// goroutine calls it.
func (c *Controller) ensureZone(logger klog.Logger, node *v1.Node) {
	key := zoneKey(node)
	if _, ok := c.zoneStates[key]; ok {
		return
	}
	c.zoneStates[key] = stateInitial
	c.zones.mu.Lock()
	defer c.zones.mu.Unlock()
	c.zones.queues[key] = newTaintQueue(c.clock, c.eviction.evictionQPS)
	logger.Info("Initializing eviction metric for zone", "zone", key)
	evictionsTotal.WithLabelValues(key).Add(0)
}

// markNodeForTainting queues the node for the NoExecute taint its Ready
// status calls for. A node already handled for the other taint is queued
// afresh. It reports whether the node was queued.
func (c *Controller) markNodeForTainting(node *v1.Node, status v1.ConditionStatus) bool {
	q := c.zones.queue(zoneKey(node))
	if q == nil {
		return false
	}
	if want := noExecuteTaintFor(status); want != nil && !nodeutil.TaintExists(node.Spec.Taints, want) {
		q.Remove(node.Name)
	}
	return q.Add(node.Name, node.UID)
}

// markNodeAsReachable removes the node's NoExecute taints and takes it out of
// its zone's queue. It reports whether the node was queued.
func (c *Controller) markNodeAsReachable(ctx context.Context, node *v1.Node) (bool, error) {
	if err := c.setNoExecuteTaint(ctx, node, nil); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to remove NoExecute taints from node", "node", klog.KObj(node))
		return false, err
	}
	q := c.zones.queue(zoneKey(node))
	if q == nil {
		return false, nil
	}
	return q.Remove(node.Name), nil
}

// handleDisruption updates the zones' states from the Ready conditions of
// their nodes and sets each zone's tainting rate accordingly. When every zone
// is fully disrupted, the problem is most likely the control plane's view,
// not the nodes: all NoExecute taints are removed and tainting stops until
// some node is Ready again.
func (c *Controller) handleDisruption(ctx context.Context, readyByZone map[string][]*v1.NodeCondition, nodes []*v1.Node) {
	logger := klog.FromContext(ctx)
	newStates := map[string]zoneState{}
	allFully := true
	for key, conds := range readyByZone {
		notReady, state := c.eviction.zoneStateOf(conds)
		observeZone(key, len(conds), notReady)
		if state != stateFullDisruption {
			allFully = false
		}
		newStates[key] = state
		if _, ok := c.zoneStates[key]; !ok {
			logger.Error(nil, "Setting initial state for unseen zone", "zone", key)
			c.zoneStates[key] = stateInitial
		}
	}

	wasAllFully := true
	for key, state := range c.zoneStates {
		if _, ok := readyByZone[key]; !ok {
			forgetZone(key)
			delete(c.zoneStates, key)
			continue
		}
		if state != stateFullDisruption {
			wasAllFully = false
			break
		}
	}

	switch {
	case allFully && wasAllFully:
		// Still all disrupted: nothing changes.
	case allFully:
		logger.Info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
		for _, node := range nodes {
			if _, err := c.markNodeAsReachable(ctx, node); err != nil {
				logger.Error(nil, "Failed to remove taints from Node", "node", klog.KObj(node))
			}
		}
		for key := range c.zoneStates {
			c.setZoneQPS(key, 0)
			c.zoneStates[key] = stateFullDisruption
		}
	case wasAllFully:
		logger.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
		// Give every node a full grace period from now.
		now := c.now()
		for _, node := range nodes {
			if h := c.health.get(node.Name); h != nil {
				h.probeTimestamp, h.readyTransitionTimestamp = now, now
				c.health.set(node.Name, h)
			}
		}
		for key := range c.zoneStates {
			c.setZoneQPS(key, c.eviction.qpsFor(newStates[key], len(readyByZone[key])))
			c.zoneStates[key] = newStates[key]
		}
	default:
		for key, state := range c.zoneStates {
			next := newStates[key]
			if state == next {
				continue
			}
			logger.Info("Controller detected that zone is now in new state", "zone", key, "newState", next)
			c.setZoneQPS(key, c.eviction.qpsFor(next, len(readyByZone[key])))
			c.zoneStates[key] = next
		}
	}
}

func (c *Controller) setZoneQPS(key string, qps float32) {
	if q := c.zones.queue(key); q != nil {
		q.SwapLimiter(qps)
	}
}
