package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

const (
	// healthUpdateTries bounds the attempts to write one node's health in a
	// pass, healthRetryInterval apart (upstream's NodeHealthUpdateRetry and
	// retrySleepTime).
	healthUpdateTries   = 5
	healthRetryInterval = 20 * time.Millisecond
	// monitorParallelism is how many nodes a pass handles at once; most of
	// the time goes to marking pods not ready, one request per pod.
	monitorParallelism = 8
)

// monitorNodeHealth is one pass over all nodes, every --node-monitor-period:
// it notices added and removed nodes, declares the nodes whose kubelet
// stopped reporting Unknown, queues NoExecute taints, marks the pods of nodes
// that just stopped being Ready not ready, and updates the zones' states.
func (c *Controller) monitorNodeHealth(ctx context.Context) error {
	start := c.clock.Now()
	defer func() { updateAllNodesHealthDuration.Observe(c.clock.Since(start).Seconds()) }()
	logger := klog.FromContext(ctx)
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	c.trackNodes(ctx, nodes)

	if c.leaseGuard != nil {
		if err := c.leaseGuard.ready(); err != nil {
			// Nothing about node health can be trusted this pass.
			logger.Info("Skipping node health pass until the Lease cache catches up", "err", err)
			return nil
		}
	}

	var mu sync.Mutex
	readyByZone := map[string][]*v1.NodeCondition{}
	workqueue.ParallelizeUntil(ctx, monitorParallelism, len(nodes), func(i int) {
		node, ready, ok := c.monitorNode(ctx, nodes[i])
		if !ok || excludedFromDisruption(node) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		key := zoneKey(node)
		readyByZone[key] = append(readyByZone[key], ready)
	})
	c.handleDisruption(ctx, readyByZone, nodes)
	return nil
}

// trackNodes records Events for nodes that appeared or disappeared since the
// last pass and keeps the zones up to date.
func (c *Controller) trackNodes(ctx context.Context, nodes []*v1.Node) {
	logger := klog.FromContext(ctx)
	seen := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		seen[node.Name] = true
		if _, known := c.knownNodes[node.Name]; known {
			c.ensureZone(logger, node)
			continue
		}
		logger.V(1).Info("Controller observed a new Node", "node", klog.KObj(node))
		c.recordNodeEvent(node.Name, node.UID, "RegisteredNode", fmt.Sprintf("Registered Node %v in Controller", node.Name))
		c.knownNodes[node.Name] = node
		c.ensureZone(logger, node)
		_, _ = c.markNodeAsReachable(ctx, node)
	}
	for name, node := range c.knownNodes {
		if seen[name] {
			continue
		}
		logger.V(1).Info("Controller observed a Node deletion", "node", klog.KObj(node))
		c.recordNodeEvent(name, node.UID, "RemovingNode", fmt.Sprintf("Removing Node %v from Controller", name))
		delete(c.knownNodes, name)
		c.health.delete(name)
		c.podRetry.Delete(name)
	}
}

func excludedFromDisruption(node *v1.Node) bool {
	_, ok := node.Labels[labelExcludeDisruption]
	return ok
}

// monitorNode brings one node's health up to date and acts on it. It returns
// the node as last read, its Ready condition (nil if it has none) and
// whether its health could be determined.
func (c *Controller) monitorNode(ctx context.Context, cached *v1.Node) (*v1.Node, *v1.NodeCondition, bool) {
	start := c.clock.Now()
	defer func() { updateNodeHealthDuration.Observe(c.clock.Since(start).Seconds()) }()
	logger := klog.FromContext(ctx)
	node, observed, ready, err := c.updateHealthWithRetry(ctx, cached)
	if err != nil {
		logger.Error(err, "Update health of Node from Controller error, Skipping - no pods will be evicted", "node", klog.KObj(cached))
		return nil, nil, false
	}
	if ready == nil {
		c.podRetry.Delete(node.Name)
		return node, nil, true
	}

	becameNotReady := ready.Status != v1.ConditionTrue && observed.Status == v1.ConditionTrue
	c.processTaintBasedEviction(ctx, node, ready)

	_, retry := c.podRetry.Load(node.Name)
	if becameNotReady {
		c.recordNodeStatusChange(logger, node, "NodeNotReady")
	}
	if becameNotReady || (retry && observed.Status != v1.ConditionTrue) {
		// Only now are its pods needed (upstream lists them for every
		// node on every pass).
		pods, err := nodeutil.PodsOnNode(c.podIndexer, node.Name)
		if err == nil {
			err = c.markPodsNotReady(ctx, pods, node.Name)
		}
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to mark all pods NotReady on node; queuing for retry", "node", klog.KObj(node))
			c.podRetry.Store(node.Name, struct{}{})
			return node, ready, true
		}
	}
	c.podRetry.Delete(node.Name)
	return node, ready, true
}

// processTaintBasedEviction turns the node's Ready status into its NoExecute
// taint: a node that is Ready loses it at once, and so does a node whose taint
// is the wrong one of the two (it gets the right one in the same request);
// otherwise the node is queued in its zone to be tainted at the zone's rate.
func (c *Controller) processTaintBasedEviction(ctx context.Context, node *v1.Node, ready *v1.NodeCondition) {
	logger := klog.FromContext(ctx)
	switch ready.Status {
	case v1.ConditionFalse, v1.ConditionUnknown:
		want := noExecuteTaintFor(ready.Status)
		other := &unreachableTaint
		if want == other {
			other = &notReadyTaint
		}
		if nodeutil.TaintExists(node.Spec.Taints, other) {
			if err := c.setNoExecuteTaint(ctx, node, want); err != nil {
				logger.Error(err, "Failed to instantly swap NoExecute taint. Will try again in the next cycle", "node", klog.KObj(node), "taint", want.Key)
			}
			return
		}
		if c.markNodeForTainting(node, ready.Status) {
			if ready.Status == v1.ConditionFalse {
				logger.V(2).Info("Node is NotReady. Adding it to the Taint queue", "node", klog.KObj(node), "timeStamp", c.now())
			} else {
				logger.V(2).Info("Node is unresponsive. Adding it to the Taint queue", "node", klog.KObj(node), "timeStamp", c.now())
			}
		}
	case v1.ConditionTrue:
		removed, err := c.markNodeAsReachable(ctx, node)
		if err != nil {
			logger.Error(nil, "Failed to remove taints from node. Will retry in next iteration", "node", klog.KObj(node))
		}
		if removed {
			logger.V(2).Info("Node is healthy again, removed all taints", "node", klog.KObj(node))
		}
	}
}

// errShortCircuit marks an error after which retrying this pass is useless.
var errShortCircuit = errors.New("node health pass short-circuited")

// updateHealthWithRetry runs updateHealth, reading the node again after a
// failure (a conflict, mostly), a few times. It returns the node as last read
// and updated. node is not changed.
func (c *Controller) updateHealthWithRetry(ctx context.Context, node *v1.Node) (*v1.Node, v1.NodeCondition, *v1.NodeCondition, error) {
	for try := 1; ; try++ {
		updated, observed, ready, err := c.updateHealth(ctx, node)
		if err == nil {
			return updated, observed, ready, nil
		}
		if errors.Is(err, errShortCircuit) || try == healthUpdateTries {
			return nil, v1.NodeCondition{}, nil, err
		}
		c.clock.Sleep(healthRetryInterval)
		name := node.Name
		node, err = c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			logger := klog.FromContext(ctx)
			logger.Error(nil, "Failed while getting a Node to retry updating node health. Probably Node was deleted", "node", klog.KRef("", name))
			return nil, v1.NodeCondition{}, nil, err
		}
	}
}

// updateHealth folds the node's status and Lease into its health record and,
// if the node showed no sign of life within its grace period, writes its
// kubelet conditions as Unknown. It returns the node as it is now (node
// itself, or a copy with those conditions marked), and its Ready condition
// as read and as it is now (nil if the node has none). node is not changed:
// it is the informer's, and only an expired node needs a copy.
func (c *Controller) updateHealth(ctx context.Context, cached *v1.Node) (*v1.Node, v1.NodeCondition, *v1.NodeCondition, error) {
	logger := klog.FromContext(ctx)
	node := cached
	lease, _ := c.leaseLister.Leases(v1.NamespaceNodeLease).Get(node.Name)
	now := c.now()
	h, grace, observed := c.healthPolicy.observe(logger, node, c.health.get(node.Name), lease, now)
	defer func() { c.health.set(node.Name, h) }()

	_, ready := nodeutil.GetNodeCondition(&node.Status, v1.NodeReady)
	if !h.expired(grace, now) {
		return node, observed, ready, nil
	}
	logger.V(2).Info("Node hasn't been updated", "node", klog.KObj(node), "duration", now.Sub(h.probeTimestamp.Time), "gracePeriod", grace)
	node = cached.DeepCopy()
	if h.status == &cached.Status {
		// As upstream, the record holds the status as marked, written
		// or not.
		h.status = &node.Status
	}
	markUnknown(node, now)
	_, ready = nodeutil.GetNodeCondition(&node.Status, v1.NodeReady)
	if apiequality.Semantic.DeepEqual(ready, &observed) {
		return node, observed, ready, nil
	}
	if c.leaseGuard != nil {
		if err := c.leaseGuard.confirmExpired(ctx, node.Name, lease); err != nil {
			return node, observed, nil, fmt.Errorf("%w: %w", errShortCircuit, err)
		}
	}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		logger.Error(err, "Error updating node", "node", klog.KObj(node))
		return node, observed, ready, err
	}
	h = &nodeHealth{status: &node.Status, probeTimestamp: h.probeTimestamp, readyTransitionTimestamp: now, lease: lease}
	return node, observed, ready, nil
}

// recordNodeEvent records an Event about a node, as upstream: "Node <name>
// event: <message>".
func (c *Controller) recordNodeEvent(name string, uid types.UID, reason, message string) {
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}
	c.recorder.Eventf(ref, v1.EventTypeNormal, reason, "Node %s event: %s", name, message)
}

// recordNodeStatusChange records "Node <name> status is now: <status>".
func (c *Controller) recordNodeStatusChange(logger klog.Logger, node *v1.Node, status string) {
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	logger.V(2).Info("Recording status change event message for node", "status", status, "node", node.Name)
	c.recorder.Eventf(ref, v1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}
