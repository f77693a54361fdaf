package nodelifecycle

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// labelPair is a label kept in step with another: the secondary (beta)
// label always gets the primary (stable) label's value.
type labelPair struct{ primary, secondary string }

// reconciledLabels are upstream's: the beta OS and arch labels follow the
// stable ones.
var reconciledLabels = []labelPair{
	{primary: v1.LabelOSStable, secondary: "beta.kubernetes.io/os"},
	{primary: v1.LabelArchStable, secondary: "beta.kubernetes.io/arch"},
}

// syncNode gives the node the NoSchedule taints its conditions and
// spec.unschedulable call for, and the beta OS and arch labels its stable
// ones call for, in at most one request.
func (c *Controller) syncNode(ctx context.Context, name string) error {
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting node %q: %w", name, err)
	}
	patched, err := nodeutil.PatchNode(ctx, c.client, node, func(n *v1.Node) {
		withNoScheduleTaints(n, c.now())
		withReconciledLabels(n)
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if patched != nil {
		klog.FromContext(ctx).V(2).Info("Updated node taints and labels", "node", klog.KObj(node), "taints", patched.Spec.Taints)
	}
	return nil
}

// withReconciledLabels sets each secondary label to its primary's value.
func withReconciledLabels(node *v1.Node) {
	for _, p := range reconciledLabels {
		value, ok := node.Labels[p.primary]
		if !ok {
			continue
		}
		if current, has := node.Labels[p.secondary]; !has || current != value {
			node.Labels[p.secondary] = value
		}
	}
}
