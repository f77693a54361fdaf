package tainteviction

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// syncNode queues every pod bound to the node; syncPod decides for each.
// A node that is gone has nothing to decide.
func (c *Controller) syncNode(ctx context.Context, name string) error {
	if _, err := c.nodeLister.Get(name); apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(4).Info("Noticed node deletion", "node", klog.KRef("", name))
		return nil
	} else if err != nil {
		return err
	}
	objs, err := c.podIndexer.ByIndex(nodeNameIndex, name)
	if err != nil {
		return fmt.Errorf("listing pods on node %s: %w", name, err)
	}
	for _, obj := range objs {
		if pod, ok := obj.(*v1.Pod); ok {
			c.enqueuePod(pod)
		}
	}
	return nil
}

// syncPod schedules, keeps or cancels the eviction of one pod from what the
// listers say about the pod and its node now.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ref, err := cache.ParseObjectName(key)
	if err != nil {
		return err
	}
	pod, err := c.podLister.Pods(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Noticed pod deletion", "pod", ref)
		c.cancelEviction(logger, ref)
		return nil
	}
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == "" {
		return nil
	}
	node, err := c.nodeLister.Get(pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		// Upstream forgets a deleted node's taints but lets its pods'
		// pending evictions run.
		return nil
	}
	if err != nil {
		return err
	}
	taints := noExecuteTaints(node.Spec.Taints)
	if len(taints) == 0 {
		c.cancelEviction(logger, ref)
		return nil
	}

	d, tolerated := tolerationTime(logger, taints, pod.Spec.Tolerations, c.compareOps)
	now := c.clock.Now()
	switch {
	case !tolerated:
		logger.V(2).Info("Not all taints are tolerated by pod on node", "pod", klog.KObj(pod), "node", klog.KObj(node))
		// A delayed eviction gives way to an immediate one.
		c.cancelEviction(logger, ref)
		c.scheduleEviction(logger, ref, now)
	case d == forever:
		logger.V(4).Info("Pod tolerates its node's taints forever", "pod", klog.KObj(pod), "node", klog.KObj(node))
		c.cancelEviction(logger, ref)
	default:
		c.scheduleEviction(logger, ref, now.Add(d))
	}
	return nil
}
