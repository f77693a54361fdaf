package tainteviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// A pod matters when it is bound; its eviction depends on its node and its
// tolerations only, so other updates are ignored.

func (c *Controller) addPod(obj any) {
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
		c.enqueuePod(pod)
	}
}

func (c *Controller) updatePod(oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	newPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if oldPod.Spec.NodeName == newPod.Spec.NodeName &&
		tolerationsEqual(oldPod.Spec.Tolerations, newPod.Spec.Tolerations) {
		return
	}
	c.enqueuePod(newPod)
}

// deletePod queues a deleted pod so that its pending eviction is cancelled.
func (c *Controller) deletePod(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Pod delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.enqueuePod(pod)
}

func (c *Controller) enqueuePod(pod *v1.Pod) {
	c.podQueue.Add(cache.MetaObjectToName(pod).String())
}

// Every node add is queued, so that a node that comes back without taints
// cancels what its pods had pending; updates only when the NoExecute taints
// change. A deleted node needs nothing: its pods' pending evictions go ahead.

func (c *Controller) addNode(obj any) {
	if node, ok := obj.(*v1.Node); ok {
		c.nodeQueue.Add(node.Name)
	}
}

func (c *Controller) updateNode(oldObj, newObj any) {
	oldNode, ok1 := oldObj.(*v1.Node)
	newNode, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if noExecuteTaintsEqual(oldNode.Spec.Taints, newNode.Spec.Taints) {
		return
	}
	c.nodeQueue.Add(newNode.Name)
}
