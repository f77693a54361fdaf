package podautoscaler

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// setStatus rebuilds the status around its conditions and lastScaleTime,
// which a rescale moves to now.
func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, metricStatuses []autoscalingv2.MetricStatus, rescale bool) {
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: current,
		DesiredReplicas: desired,
		LastScaleTime:   hpa.Status.LastScaleTime,
		CurrentMetrics:  metricStatuses,
		Conditions:      hpa.Status.Conditions,
	}
	if c.observedGeneration {
		gen := hpa.Generation
		hpa.Status.ObservedGeneration = &gen
	}
	if rescale {
		now := metav1.NewTime(c.clock.Now())
		hpa.Status.LastScaleTime = &now
	}
}

// setCurrent records the current count and metrics, keeping the desired
// count of the last successful sync (a failed sync's status).
func (c *Controller) setCurrent(hpa *autoscalingv2.HorizontalPodAutoscaler, current int32, metricStatuses []autoscalingv2.MetricStatus) {
	c.setStatus(hpa, current, hpa.Status.DesiredReplicas, metricStatuses, false)
}

// updateStatusIfNeeded writes hpa's status unless it equals old.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if apiequality.Semantic.DeepEqual(old, &hpa.Status) {
		return nil
	}
	updated, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{})
	if err != nil {
		c.recorder.Event(hpa, v1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %w", hpa.Name, err)
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: updated.Namespace, Name: updated.Name}, updated.UID, hpaResource, updated.ResourceVersion)
	klog.FromContext(ctx).V(2).Info("Successfully updated status", "HPA", klog.KObj(hpa))
	return nil
}
