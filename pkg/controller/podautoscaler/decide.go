package podautoscaler

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// syncState is what one reconciliation of an HPA works with.
type syncState struct {
	hpa       *autoscalingv2.HorizontalPodAutoscaler
	oldStatus *autoscalingv2.HorizontalPodAutoscalerStatus
	key       string
	// reference names the target in messages: Kind/namespace/name.
	reference string

	scale    *autoscalingv1.Scale
	targetGR schema.GroupResource
	current  int32

	minReplicas    int32
	desired        int32
	reason         string
	rescale        bool
	metricStatuses []autoscalingv2.MetricStatus
}

const (
	reasonAboveMax = "Current number of replicas above Spec.MaxReplicas"
	reasonBelowMin = "Current number of replicas below Spec.MinReplicas"
)

// decide sets s.desired, s.reason and s.rescale. Its first result is an
// error to return after scaling anyway (some metrics failed, the others
// sufficed); its second ends the sync (no metric could be computed; the
// status and an Event are written).
func (c *Controller) decide(ctx context.Context, s *syncState) (retErr, err error) {
	hpa := s.hpa
	s.minReplicas = 1
	if hpa.Spec.MinReplicas != nil {
		s.minReplicas = *hpa.Spec.MinReplicas
	}
	s.rescale = true
	scaledToZero := c.scaleToZero && conditionTrue(hpa, autoscalingv2.ScaledToZero)
	needsMetrics := true
	switch {
	case s.current == 0:
		// A target scaled to zero by hand disables the HPA; one the HPA
		// scaled to zero (HPAScaleToZero) goes on scaling from zero.
		if !((s.minReplicas != 0 && scaledToZero) || (scaledToZero && hasObjectOrExternalMetrics(hpa))) {
			needsMetrics, s.desired, s.rescale = false, 0, false
			c.setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
			if !c.scaleToZero {
				removeCondition(hpa, autoscalingv2.ScaledToZero)
			}
		}
	case s.current > hpa.Spec.MaxReplicas:
		needsMetrics, s.desired, s.reason = false, hpa.Spec.MaxReplicas, reasonAboveMax
	case s.current < s.minReplicas:
		needsMetrics, s.desired, s.reason = false, s.minReplicas, reasonBelowMin
	}
	if !needsMetrics {
		return nil, nil
	}
	p, statuses, err := c.replicasForMetrics(ctx, hpa, s.scale)
	s.metricStatuses = statuses
	if err != nil && p.replicas == -1 {
		c.setCurrent(hpa, s.current, statuses)
		if err := c.updateStatusIfNeeded(ctx, s.oldStatus, hpa); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Updating the HPA's status")
		}
		c.recorder.Event(hpa, v1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
		return nil, fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", s.reference, err)
	}
	c.logProposal(ctx, s, p)
	metric := ""
	if p.replicas > s.desired {
		s.desired, metric = p.replicas, p.metric
	}
	if s.desired > s.current {
		s.reason = fmt.Sprintf("%s above target", metric)
	}
	if s.desired < s.current {
		s.reason = "All metrics below target"
	}
	if hpa.Spec.Behavior == nil {
		s.desired = c.normalize(hpa, s.key, s.current, s.desired, s.minReplicas)
	} else {
		s.desired = c.normalizeWithBehaviors(hpa, s.key, s.current, s.desired, s.minReplicas)
	}
	if s.current == 0 && s.minReplicas != 0 && scaledToZero && s.desired < s.minReplicas {
		s.desired = s.minReplicas
		if s.reason == "" {
			s.reason = reasonBelowMin
		}
	}
	s.rescale = s.desired != s.current
	return err, nil
}

func (c *Controller) logProposal(ctx context.Context, s *syncState, p proposal) {
	msg := "Proposing desired replicas"
	if s.current == 0 {
		msg = "Proposing desired replicas from zero"
	}
	klog.FromContext(ctx).V(4).Info(msg, "desiredReplicas", p.replicas, "metric", p.metric,
		"tolerances", c.tolerancesFor(s.hpa), "timestamp", p.timestamp, "scaleTarget", s.reference)
}

// hasObjectOrExternalMetrics reports whether the HPA scales on a metric
// that exists without pods (what scaling from zero needs).
func hasObjectOrExternalMetrics(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range hpa.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			return true
		}
	}
	return false
}
