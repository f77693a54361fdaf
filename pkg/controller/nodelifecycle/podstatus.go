package nodelifecycle

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// podBound queues a Pod that was just bound to a node (created bound, or
// its spec.nodeName set), so that it is marked not ready if that node is not
// Ready: the monitor pass only marks the Pods present when the node's Ready
// condition changes.
func (c *Controller) podBound(oldObj, newObj any) {
	pod, ok := newObj.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	if old, ok := oldObj.(*v1.Pod); ok && old.Spec.NodeName == pod.Spec.NodeName {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err != nil {
		return
	}
	c.podQueue.Add(key)
}

// syncPod marks the Pod not ready if the node it is bound to is not Ready
// as far as the controller knows.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting pod %s: %w", key, err)
	}
	nodeName := pod.Spec.NodeName
	h := c.health.get(nodeName)
	if h == nil {
		// Not seen by a monitor pass yet, or gone.
		return nil
	}
	if _, err := c.nodeLister.Get(nodeName); err != nil {
		return fmt.Errorf("getting node %q of pod %s: %w", nodeName, key, err)
	}
	_, ready := nodeutil.GetNodeCondition(h.status, v1.NodeReady)
	if ready == nil || ready.Status == v1.ConditionTrue {
		return nil
	}
	return c.markPodsNotReady(ctx, []*v1.Pod{pod}, nodeName)
}

// markPodsNotReady sets the Ready condition of the pods bound to nodeName
// to False, one status update per pod that is not marked yet, and records a
// NodeNotReady Event on each.
func (c *Controller) markPodsNotReady(ctx context.Context, pods []*v1.Pod, nodeName string) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Update ready status of pods on node", "node", klog.KRef("", nodeName))
	var errs []error
	for _, cached := range pods {
		if cached.Spec.NodeName != nodeName {
			continue
		}
		pod := cached.DeepCopy()
		if !setPodNotReady(pod, c.now()) {
			continue
		}
		logger.V(2).Info("Updating ready status of pod to false", "pod", klog.KObj(pod))
		if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			logger.Info("Failed to update status for pod", "pod", klog.KObj(pod), "err", err)
			errs = append(errs, err)
		}
		c.recorder.Event(pod, v1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
	return utilerrors.NewAggregate(errs)
}

// setPodNotReady sets the pod's Ready condition, if it has one, to False,
// stamping the transition, and reports whether that changed anything.
func setPodNotReady(pod *v1.Pod, now metav1.Time) bool {
	for i := range pod.Status.Conditions {
		cond := &pod.Status.Conditions[i]
		if cond.Type != v1.PodReady {
			continue
		}
		if cond.Status == v1.ConditionFalse {
			return false
		}
		cond.Status = v1.ConditionFalse
		cond.LastTransitionTime = now
		return true
	}
	return false
}
