package podgc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/klog/v2"
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
		setCondition(status, c, now)
	}
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID}, Status: *status})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("creating the status patch of pod %q/%q: %w", pod.Namespace, pod.Name, err)
	}
	if bytes.Equal(patch, []byte(fmt.Sprintf(`{"metadata":{"uid":%q}}`, pod.UID))) {
		return nil, nil
	}
	return patch, nil
}

// setCondition adds cond to status or replaces the condition of its type,
// keeping the transition time when the status does not change.
func setCondition(status *v1.PodStatus, cond v1.PodCondition, now metav1.Time) {
	cond.LastTransitionTime = now
	for i := range status.Conditions {
		if status.Conditions[i].Type == cond.Type {
			if status.Conditions[i].Status == cond.Status {
				cond.LastTransitionTime = status.Conditions[i].LastTransitionTime
			}
			status.Conditions[i] = cond
			return
		}
	}
	status.Conditions = append(status.Conditions, cond)
}
