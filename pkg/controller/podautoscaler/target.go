package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// readScale reads the target's scale subresource into s. A failure sets
// AbleToScale False (FailedGetScale), records an Event and writes the
// status.
func (c *Controller) readScale(ctx context.Context, s *syncState) error {
	hpa := s.hpa
	fail := func(cause, err error) error {
		c.recorder.Event(hpa, v1.EventTypeWarning, "FailedGetScale", cause.Error())
		c.setConditionf(hpa, autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", cause)
		if err := c.updateStatusIfNeeded(ctx, s.oldStatus, hpa); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Updating the HPA's status")
		}
		return err
	}
	gv, err := schema.ParseGroupVersion(hpa.Spec.ScaleTargetRef.APIVersion)
	if err != nil {
		return fail(err, fmt.Errorf("invalid API version in scale target reference: %v%w", err, errSpec))
	}
	mappings, err := c.mapper.RESTMappings(schema.GroupKind{Group: gv.Group, Kind: hpa.Spec.ScaleTargetRef.Kind})
	if err != nil {
		return fail(err, fmt.Errorf("unable to determine resource for scale target reference: %w", err))
	}
	scale, gr, err := c.scaleOf(ctx, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name, mappings)
	if err != nil {
		return fail(err, fmt.Errorf("failed to query scale subresource for %s: %w", s.reference, err))
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	s.scale, s.targetGR, s.current = scale, gr, scale.Spec.Replicas
	return nil
}

// scaleOf reads the scale of the first mapping that has one; if none
// does, the first mapping's error.
func (c *Controller) scaleOf(ctx context.Context, namespace, name string, mappings []*meta.RESTMapping) (*autoscalingv1.Scale, schema.GroupResource, error) {
	var firstErr error
	for i, m := range mappings {
		gr := m.Resource.GroupResource()
		scale, err := c.scales.Scales(namespace).Get(ctx, gr, name, metav1.GetOptions{})
		if err == nil {
			return scale, gr, nil
		}
		if i == 0 {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, firstErr
}

// rescale writes s.desired to the target's scale, re-reading it after a
// conflict. Success sets AbleToScale SucceededRescale, records the
// SuccessfulRescale Event and the scale event, and the ScaledToZero
// condition (HPAScaleToZero); failure sets FailedUpdateScale, records
// FailedRescale and writes the status.
func (c *Controller) rescale(ctx context.Context, s *syncState) error {
	hpa := s.hpa
	scale := s.scale
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale.Spec.Replicas = s.desired
		_, updateErr := c.scales.Scales(hpa.Namespace).Update(ctx, s.targetGR, scale, metav1.UpdateOptions{})
		if updateErr == nil {
			return nil
		}
		latest, getErr := c.scales.Scales(hpa.Namespace).Get(ctx, s.targetGR, hpa.Spec.ScaleTargetRef.Name, metav1.GetOptions{})
		if getErr == nil {
			scale = latest
		} else {
			utilruntime.HandleErrorWithContext(ctx, getErr, "Getting the latest scale during conflict retry", "scaleTarget", s.reference)
		}
		return updateErr
	})
	if err != nil {
		c.recorder.Eventf(hpa, v1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", s.desired, s.reason, err.Error())
		c.setConditionf(hpa, autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
		c.setCurrent(hpa, s.current, s.metricStatuses)
		if err := c.updateStatusIfNeeded(ctx, s.oldStatus, hpa); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Updating the HPA's status")
		}
		return fmt.Errorf("failed to rescale %s: %w", s.reference, err)
	}
	c.setConditionf(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", s.desired)
	c.recorder.Eventf(hpa, v1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", s.desired, s.reason)
	c.history.storeScaleEvent(hpa.Spec.Behavior, s.key, s.current, s.desired, c.clock.Now())
	klog.FromContext(ctx).Info("Successfully rescaled", "HPA", klog.KObj(hpa), "currentReplicas", s.current, "desiredReplicas", s.desired, "reason", s.reason)
	switch {
	case !c.scaleToZero:
		removeCondition(hpa, autoscalingv2.ScaledToZero)
	case s.current > 0 && s.desired == 0 && s.minReplicas == 0 && hasObjectOrExternalMetrics(hpa):
		c.setCondition(hpa, autoscalingv2.ScaledToZero, v1.ConditionTrue, "ScaledToZero", "the HPA controller scaled the workload to zero")
	default:
		c.setCondition(hpa, autoscalingv2.ScaledToZero, v1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero")
	}
	return nil
}
