package podgc

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

// forceDelete marks pod Failed (adding cond, if any) unless its phase is
// final, then deletes it with a zero grace period. It counts the deletion
// under reason, logs failures with the message failure, and reports whether
// it succeeded. A pod that is already gone counts as deleted.
func (c *Controller) forceDelete(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, reason, failure string) bool {
	deletingPodsTotal.WithLabelValues(pod.Namespace, reason).Inc()
	err := c.markFailedAndDelete(ctx, pod, cond)
	if err != nil && !apierrors.IsNotFound(err) {
		utilruntime.HandleErrorWithContext(ctx, err, failure, "pod", klog.KObj(pod))
		deletingPodsErrorTotal.WithLabelValues(pod.Namespace, reason).Inc()
		return false
	}
	return true
}

func (c *Controller) markFailedAndDelete(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition) error {
	klog.FromContext(ctx).Info("PodGC is force deleting Pod", "pod", klog.KObj(pod))
	// A pod whose kubelet is gone would otherwise stay Running forever.
	if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
		patch, err := failedStatusPatch(pod, cond, metav1.NewTime(c.clock.Now()))
		if err != nil {
			return err
		}
		if patch != nil {
			if _, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				return fmt.Errorf("failed to patch status %q for pod %q/%q: %w", patch, pod.Namespace, pod.Name, err)
			}
		}
	}
	return c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0))
}

// failedStatusPatch returns the strategic merge patch that sets pod's phase
// to Failed and its observedGeneration (PodObservedGenerationTracking is GA)
// and adds or updates cond, with the pod's UID as a precondition; nil when
// it changes nothing.
func failedStatusPatch(pod *v1.Pod, cond *v1.PodCondition, now metav1.Time) ([]byte, error) {
	status := pod.Status.DeepCopy()
	status.Phase = v1.PodFailed
	status.ObservedGeneration = pod.Generation
	if cond != nil {
		c := *cond
		c.ObservedGeneration = pod.Generation
		podcontrol.SetCondition(status, c, now)
	}
	return podcontrol.StatusPatch(pod, status)
}
