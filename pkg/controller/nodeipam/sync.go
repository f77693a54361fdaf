package nodeipam

import (
	"context"
	"encoding/json"
	"fmt"
	"net"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

const (
	// Upstream's event reasons, recorded as "Node <name> status is now: <reason>".
	reasonCIDRNotAvailable     = "CIDRNotAvailable"
	reasonCIDRAssignmentFailed = "CIDRAssignmentFailed"
	// cidrUpdateRetries is how many patches of a Node fail before the
	// CIDRAssignmentFailed Event, as upstream.
	cidrUpdateRetries = 3
)

// syncNode brings the IPAM state and the Node named name in line: a gone
// Node's CIDRs are released, a Node's own CIDRs are occupied, and a Node
// without CIDRs gets a block of every cluster CIDR.
func (c *Controller) syncNode(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	node, err := c.nodeLister.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(3).Info("Node has been deleted, releasing its CIDRs", "node", klog.KRef("", name))
		c.release(name)
		return nil
	case err != nil:
		return err
	case len(node.Spec.PodCIDRs) > 0:
		return c.occupy(node)
	case !node.DeletionTimestamp.IsZero():
		logger.V(3).Info("Node is being deleted", "node", klog.KObj(node))
		return nil
	}
	cidrs, err := c.cidrsFor(ctx, node)
	if err != nil || cidrs == nil {
		return err
	}
	return c.assign(ctx, node, cidrs)
}

// occupy records the CIDRs the Node shows. CIDRs that cannot be held are
// a problem no retry fixes: the Node has to change first.
func (c *Controller) occupy(node *v1.Node) error {
	released, err := c.alloc.observe(node)
	if released {
		c.enqueueWaiting()
	}
	return controller.Permanent(err)
}

// release frees what a gone Node held.
func (c *Controller) release(name string) {
	if c.alloc.forget(name) {
		c.enqueueWaiting()
	}
}

// cidrsFor returns the CIDRs to set on a Node that shows none: the ones it
// was handed before if a patch setting them may not have gone through, or
// new ones. It returns nil when the Node already got its CIDRs and the
// cache has not caught up.
func (c *Controller) cidrsFor(ctx context.Context, node *v1.Node) ([]*net.IPNet, error) {
	logger := klog.FromContext(ctx)
	if h, ok := c.alloc.lookup(node.Name); ok {
		switch {
		case h.uid == node.UID && h.confirmed:
			logger.V(4).Info("Node's CIDRs were set; waiting for the cache to show them", "node", klog.KObj(node))
			return nil, nil
		case h.uid == node.UID:
			return h.cidrs, nil
		default:
			// A former Node of the same name.
			c.release(node.Name)
		}
	}
	cidrs, err := c.alloc.allocate(node.Name, node.UID)
	if err != nil {
		c.recordNodeEvent(ctx, node, reasonCIDRNotAvailable)
		// Retrying cannot help until blocks are released, and releasing
		// them enqueues the waiting Nodes.
		return nil, controller.Permanent(err)
	}
	logger.V(4).Info("Allocated CIDRs for node", "node", klog.KObj(node), "CIDRs", cidrStrings(cidrs))
	return cidrs, nil
}

// assign patches the Node's podCIDR and podCIDRs. On failure the CIDRs
// stay reserved for the Node, since the patch may have gone through, and
// the same ones are patched again.
func (c *Controller) assign(ctx context.Context, node *v1.Node, cidrs []*net.IPNet) error {
	logger := klog.FromContext(ctx)
	podCIDRs := cidrStrings(cidrs)
	err := patchNodeCIDRs(ctx, c.client, node.Name, podCIDRs)
	switch {
	case err == nil:
		c.alloc.confirm(node.Name, node.UID)
		logger.Info("Set node PodCIDR", "node", klog.KObj(node), "podCIDRs", podCIDRs)
		return nil
	case apierrors.IsNotFound(err):
		logger.V(3).Info("Node was deleted before its CIDRs were set", "node", klog.KObj(node))
		c.release(node.Name)
		return nil
	}
	if c.queue.NumRequeues(node.Name)+1 >= cidrUpdateRetries {
		c.recordNodeEvent(ctx, node, reasonCIDRAssignmentFailed)
	}
	return fmt.Errorf("failed to patch podCIDRs %v of node %s: %w", podCIDRs, node.Name, err)
}

// cidrPatch is upstream's strategic merge patch of a Node's pod CIDRs.
type cidrPatch struct {
	Spec struct {
		PodCIDR  string   `json:"podCIDR"`
		PodCIDRs []string `json:"podCIDRs,omitempty"`
	} `json:"spec"`
}

// patchNodeCIDRs sets podCIDR to the first of cidrs and podCIDRs to all.
func patchNodeCIDRs(ctx context.Context, client kubernetes.Interface, name string, cidrs []string) error {
	var p cidrPatch
	p.Spec.PodCIDR, p.Spec.PodCIDRs = cidrs[0], cidrs
	data, err := json.Marshal(&p)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	return err
}

// recordNodeEvent records upstream's node status change Event.
func (c *Controller) recordNodeEvent(ctx context.Context, node *v1.Node, status string) {
	klog.FromContext(ctx).V(2).Info("Recording status change event message for node", "status", status, "node", node.Name)
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	c.recorder.Eventf(ref, v1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}
