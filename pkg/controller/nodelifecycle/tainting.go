package nodelifecycle

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// noExecuteTaintingPass works every zone's taint queue: each due node,
// as the zone's rate allows, gets the NoExecute taint its Ready status calls
// for now, replacing the other one, or is dropped if it is Ready again.
func (c *Controller) noExecuteTaintingPass(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for _, key := range c.zones.keys() {
		c.zones.queue(key).Try(logger, func(n queuedNode) (bool, time.Duration) {
			return c.taintQueuedNode(ctx, n.name)
		})
	}
}

// taintQueuedNode returns whether the node is done with, or else when to
// look at it again.
func (c *Controller) taintQueuedNode(ctx context.Context, name string) (bool, time.Duration) {
	logger := klog.FromContext(ctx)
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		logger.Info("Node no longer present in nodeLister", "node", klog.KRef("", name))
		return true, 0
	}
	if err != nil {
		logger.Info("Failed to get Node from the nodeLister", "node", klog.KRef("", name), "err", err)
		return false, 50 * time.Millisecond
	}
	_, ready := nodeutil.GetNodeCondition(&node.Status, v1.NodeReady)
	if ready == nil {
		logger.Info("Failed to get NodeCondition from the node status", "node", klog.KRef("", name))
		return false, 50 * time.Millisecond
	}
	want := noExecuteTaintFor(ready.Status)
	if want == nil {
		logger.V(4).Info("Node was in a taint queue, but it's ready now. Ignoring taint request", "node", klog.KRef("", name))
		return true, 0
	}
	if err := c.setNoExecuteTaint(ctx, node, want); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Unable to taint unresponsive Node", "node", klog.KRef("", name), "taint", want.Key)
		return false, 0
	}
	evictionsTotal.WithLabelValues(zoneKey(node)).Inc()
	return true, 0
}
