package podgc

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// gc runs one collection pass over the listers' contents, in upstream's
// order: terminated, terminating on out-of-service nodes, orphaned,
// unscheduled terminating.
func (c *Controller) gc(ctx context.Context) {
	logger := klog.FromContext(ctx)
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Error while listing all pods")
		return
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Error while listing all nodes")
		return
	}
	if c.opts.TerminatedPodThreshold > 0 {
		c.gcTerminated(ctx, pods)
	}
	c.gcTerminatingOutOfService(ctx, pods)
	c.gcOrphaned(ctx, pods, nodes)
	c.gcUnscheduledTerminating(ctx, pods)
}

// gcTerminated deletes the terminated pods beyond the threshold.
func (c *Controller) gcTerminated(ctx context.Context, pods []*v1.Pod) {
	victims := terminatedOverThreshold(pods, c.opts.TerminatedPodThreshold)
	if len(victims) == 0 {
		return
	}
	klog.FromContext(ctx).Info("Garbage collecting pods", "numPods", len(victims))
	c.deleteAll(ctx, victims, reasonTerminated, "Failed to delete terminated pod")
}

// gcTerminatingOutOfService deletes terminating pods on nodes that are not
// Ready and are tainted node.kubernetes.io/out-of-service.
func (c *Controller) gcTerminatingOutOfService(ctx context.Context, pods []*v1.Pod) {
	logger := klog.FromContext(ctx)
	var victims []*v1.Pod
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil || pod.Spec.NodeName == "" {
			continue
		}
		node, err := c.nodeLister.Get(pod.Spec.NodeName)
		if err != nil {
			logger.V(4).Info("Failed to get node of terminating pod", "pod", klog.KObj(pod), "node", klog.KRef("", pod.Spec.NodeName), "err", err)
			continue
		}
		if isOutOfService(node) {
			logger.V(4).Info("Garbage collecting pod that is terminating", "pod", klog.KObj(pod), "phase", pod.Status.Phase)
			victims = append(victims, pod)
		}
	}
	if len(victims) == 0 {
		return
	}
	logger.V(4).Info("Garbage collecting pods that are terminating on node tainted with node.kubernetes.io/out-of-service", "numPods", len(victims))
	sort.Sort(byEvictionAndCreationTimestamp(victims))
	c.deleteAll(ctx, victims, reasonTerminatingOutOfService, "Failed to delete terminating pod on out-of-service node")
}

// gcOrphaned deletes pods bound to nodes that, after the quarantine, a live
// GET confirms do not exist.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*v1.Pod, nodes []*v1.Node) {
	logger := klog.FromContext(ctx)
	existing := sets.New[string]()
	for _, n := range nodes {
		existing.Insert(n.Name)
	}
	due := c.updateQuarantine(pods, existing)
	deleted := sets.New[string]()
	for _, name := range due {
		exists, err := c.nodeExists(ctx, name)
		switch {
		case err != nil:
			// Quarantined again on the next pass if still needed.
			logger.Error(err, "Error while getting node", "node", klog.KRef("", name))
		case !exists:
			deleted.Insert(name)
		}
	}
	if deleted.Len() == 0 {
		return
	}
	for _, pod := range pods {
		if !deleted.Has(pod.Spec.NodeName) {
			continue
		}
		logger.V(2).Info("Found orphaned Pod assigned to the Node, deleting", "pod", klog.KObj(pod), "node", klog.KRef("", pod.Spec.NodeName))
		cond := &v1.PodCondition{
			Type:    v1.DisruptionTarget,
			Status:  v1.ConditionTrue,
			Reason:  "DeletionByPodGC",
			Message: "PodGC: node no longer exists",
		}
		if c.forceDelete(ctx, pod, cond, reasonOrphaned, "Failed to delete orphaned pod") {
			logger.Info("Forced deletion of orphaned Pod succeeded", "pod", klog.KObj(pod))
		}
	}
}

// updateQuarantine starts the quarantine of every node that a pod is bound
// to but that is missing from existing, and removes and returns the
// quarantined nodes that are due for a check: those whose quarantine is
// over and that are still missing. As upstream's delaying queue does, a
// node's quarantine is not extended while it lasts, and a node found again
// leaves quarantine when it would have been due.
func (c *Controller) updateQuarantine(pods []*v1.Pod, existing sets.Set[string]) []string {
	now := c.clock.Now()
	for _, pod := range pods {
		name := pod.Spec.NodeName
		if name == "" || existing.Has(name) {
			continue
		}
		if _, ok := c.quarantine[name]; !ok {
			c.quarantine[name] = now.Add(c.opts.Quarantine)
		}
	}
	var due []string
	for name, at := range c.quarantine {
		if at.After(now) {
			continue
		}
		delete(c.quarantine, name)
		if !existing.Has(name) {
			due = append(due, name)
		}
	}
	sort.Strings(due)
	return due
}

// nodeExists asks the API server, not the informer, whether a node exists.
func (c *Controller) nodeExists(ctx context.Context, name string) (bool, error) {
	_, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// gcUnscheduledTerminating deletes terminating pods bound to no node.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*v1.Pod) {
	logger := klog.FromContext(ctx)
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil || pod.Spec.NodeName != "" {
			continue
		}
		logger.V(2).Info("Found unscheduled terminating Pod not assigned to any Node, deleting", "pod", klog.KObj(pod))
		if c.forceDelete(ctx, pod, nil, reasonTerminatingUnscheduled, "Failed to delete unscheduled terminating pod") {
			logger.Info("Forced deletion of unscheduled terminating Pod succeeded", "pod", klog.KObj(pod))
		}
	}
}

// deleteAll force-deletes pods concurrently and waits for all of them.
func (c *Controller) deleteAll(ctx context.Context, pods []*v1.Pod, reason, failure string) {
	workqueue.ParallelizeUntil(ctx, deleteParallelism, len(pods), func(i int) {
		c.forceDelete(ctx, pods[i], nil, reason, failure)
	})
}

// isOutOfService reports whether a node is not Ready and carries the
// out-of-service taint (any value or effect).
func isOutOfService(node *v1.Node) bool {
	if nodeutil.ReadyStatus(node) == v1.ConditionTrue {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Key == v1.TaintNodeOutOfService {
			return true
		}
	}
	return false
}
