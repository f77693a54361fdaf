package daemonset

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// Node events are many (every node of the cluster, on every label or
// taint change) and each may concern any DaemonSet. Their handlers only
// put the node's name on nodeQueue, where repeated changes of one node
// collapse into one key; a node worker then evaluates every DaemonSet
// against the node once (syncNode), each through its cached placement, and
// enqueues only the DaemonSets whose pods on that node must change.
// Status-only node updates (heartbeats, conditions) are dropped in the
// handler: placement reads labels and taints only.

func (c *Controller) addNode(logger klog.Logger, obj any) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	logger.V(4).Info("Queuing node addition", "node", klog.KObj(node))
	c.nodeQueue.Add(node.Name)
}

func (c *Controller) updateNode(logger klog.Logger, oldObj, newObj any) {
	oldNode, ok1 := oldObj.(*v1.Node)
	curNode, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 || placementInputsEqual(oldNode, curNode) {
		return
	}
	logger.V(4).Info("Queuing node update", "node", klog.KObj(curNode))
	c.nodeQueue.Add(curNode.Name)
}

// deleteNode queues a deleted node, so that the DaemonSets with pods for
// it count it out at once (upstream waits for the pod garbage collector to
// delete those pods).
func (c *Controller) deleteNode(logger klog.Logger, obj any) {
	node, ok := untombstone[*v1.Node](obj)
	if !ok {
		return
	}
	logger.V(4).Info("Queuing node deletion", "node", klog.KObj(node))
	c.nodeQueue.Add(node.Name)
}

// placementInputsEqual reports whether two versions of a node look the
// same to every placement: same labels (node selectors and affinity; the
// metadata.name field cannot change) and taints.
func placementInputsEqual(a, b *v1.Node) bool {
	return apiequality.Semantic.DeepEqual(a.Labels, b.Labels) && apiequality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints)
}

// syncNode enqueues the DaemonSets whose pods on the named node must
// change, as upstream decides it: the node should run the DaemonSet's pod
// and has none, or has one it should no longer run, or has one while the
// DaemonSet counts misscheduled pods (the node may have become right
// again). A node that is gone wakes every DaemonSet with a pod on it.
func (c *Controller) syncNode(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	node, err := c.nodeLister.Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("error getting node %s: %w", name, err)
	}
	pods, err := nodeutil.PodsOnNode(c.podIndexer, name)
	if err != nil {
		return err
	}
	scheduled := map[string]bool{}
	for _, pod := range pods {
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.Kind == controllerKind.Kind {
			scheduled[podKey(pod.Namespace, ref.Name)] = true
		}
	}
	if node == nil {
		logger.V(4).Info("Node is gone, syncing the DaemonSets with pods on it", "node", name, "daemonSets", len(scheduled))
		for key := range scheduled {
			c.queue.Add(key)
		}
		return nil
	}
	sets, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("error listing daemon sets: %w", err)
	}
	for _, ds := range sets {
		f := c.placements.of(ds).on(logger, node)
		has := scheduled[objectKey(ds)]
		if (f.shouldRun && !has) || (!f.shouldContinueRunning && has) || (has && ds.Status.NumberMisscheduled > 0) {
			c.enqueue(ds)
		}
	}
	return nil
}
