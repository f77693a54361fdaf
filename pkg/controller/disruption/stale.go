package disruption

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// staleDisruptionCondition reports whether pod carries a DisruptionTarget
// condition that becomes stale timeout after its last transition, and how
// long until then (0: it is). Only a True condition of a pod that is not
// being deleted and has not terminated counts, and not one the kubelet
// set: the kubelet's may precede the deletion by any length of time.
func staleDisruptionCondition(pod *v1.Pod, timeout time.Duration, now time.Time) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil {
		return false, 0
	}
	_, cond := podCondition(&pod.Status, v1.DisruptionTarget)
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason == v1.PodReasonTerminationByKubelet ||
		pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false, 0
	}
	return true, max(timeout-now.Sub(cond.LastTransitionTime.Time), 0)
}

// syncStalePod sets a pod's stale DisruptionTarget condition to False
// (without reason or message, as upstream), or requeues the pod for when
// it becomes stale.
func (c *Controller) syncStalePod(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Skipping clearing DisruptionTarget condition because pod was deleted", "pod", klog.KRef(ns, name))
		return nil
	}
	if err != nil {
		return err
	}
	now := c.clock.Now()
	stale, after := staleDisruptionCondition(pod, c.staleTimeout, now)
	if !stale {
		return nil
	}
	if after > 0 {
		c.staleQueue.AddAfter(key, after)
		return nil
	}
	newPod := pod.DeepCopy()
	i, old := podCondition(&newPod.Status, v1.DisruptionTarget)
	var gen int64
	if c.observedGen || old.ObservedGeneration != 0 {
		gen = newPod.Generation
	}
	newPod.Status.Conditions[i] = v1.PodCondition{
		Type:               v1.DisruptionTarget,
		Status:             v1.ConditionFalse,
		ObservedGeneration: gen,
		LastTransitionTime: metav1.NewTime(now),
	}
	if _, err := c.client.CoreV1().Pods(ns).UpdateStatus(ctx, newPod, metav1.UpdateOptions{}); err != nil {
		return err
	}
	logger.V(2).Info("Reset stale DisruptionTarget condition to False", "pod", klog.KObj(pod))
	return nil
}

// podCondition returns the index and a pointer to the condition of type t
// in status, or -1 and nil.
func podCondition(status *v1.PodStatus, t v1.PodConditionType) (int, *v1.PodCondition) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return i, &status.Conditions[i]
		}
	}
	return -1, nil
}
