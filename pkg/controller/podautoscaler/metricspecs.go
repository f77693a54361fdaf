package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// errSpec marks errors caused by the HPA's spec (the reconciliation
// metrics' "spec" error label).
var errSpec = errors.New("")

// proposal is one metric's outcome: the replica count it asks for and a
// description of it for Events and logs.
type proposal struct {
	replicas  int32
	metric    string
	timestamp time.Time
}

// replicasForMetrics returns the highest count any metric asks for, the
// metrics' statuses, and the first invalid metric's error. When every
// metric failed, or some failed and the others would scale down, it sets
// ScalingActive False from the first failure and returns replicas -1.
func (c *Controller) replicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale) (proposal, []autoscalingv2.MetricStatus, error) {
	selector, err := c.targetSelector(hpa, scale.Status.Selector)
	if err != nil {
		return proposal{replicas: -1}, nil, err
	}
	specs := hpa.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var best proposal
	invalid := 0
	var firstErr error
	var firstCond autoscalingv2.HorizontalPodAutoscalerCondition
	for i, spec := range specs {
		p, cond, err := c.replicasForMetric(ctx, hpa, spec, scale.Spec.Replicas, scale.Status.Replicas, selector, &statuses[i])
		if err != nil {
			if invalid == 0 {
				firstErr, firstCond = err, cond
			}
			invalid++
			continue
		}
		if best.replicas == 0 || p.replicas > best.replicas {
			best = p
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(specs), firstErr)
	}
	if invalid >= len(specs) || (invalid > 0 && best.replicas < scale.Spec.Replicas) {
		c.setCondition(hpa, firstCond.Type, firstCond.Status, firstCond.Reason, firstCond.Message)
		return proposal{replicas: -1}, statuses, firstErr
	}
	c.setConditionf(hpa, autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", best.metric)
	return best, statuses, firstErr
}

// replicasForMetric computes one metric's proposal and status; on failure
// it returns the ScalingActive condition to report (its Event is
// recorded already).
func (c *Controller) replicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (p proposal, cond autoscalingv2.HorizontalPodAutoscalerCondition, err error) {
	start := c.clock.Now()
	defer func() { observeMetricComputation(hpa, spec.Type, p.replicas, err, c.clock.Since(start)) }()

	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		p, cond, err = c.objectMetric(ctx, hpa, spec, specReplicas, statusReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get object metric value: %w", err)
		}
	case autoscalingv2.PodsMetricSourceType:
		p, cond, err = c.podsMetric(ctx, hpa, spec, specReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get pods metric value: %w", err)
		}
	case autoscalingv2.ResourceMetricSourceType:
		p, cond, err = c.resourceMetric(ctx, hpa, spec, specReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s resource metric value: %w", spec.Resource.Name, err)
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		p, cond, err = c.containerResourceMetric(ctx, hpa, spec, specReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s container metric value: %w", spec.ContainerResource.Container, err)
		}
	case autoscalingv2.ExternalMetricSourceType:
		p, cond, err = c.externalMetric(ctx, hpa, spec, specReplicas, statusReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s external metric value: %w", spec.External.Metric.Name, err)
		}
	default:
		// The API server's validation lets no other type through.
		err = fmt.Errorf("unknown metric source type %q%w", string(spec.Type), errSpec)
		return proposal{}, c.unableToCompute(hpa, "InvalidMetricSourceType", err), err
	}
	return p, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}

// unableToCompute records a Warning Event with reason and returns the
// ScalingActive False condition a metric failure sets.
func (c *Controller) unableToCompute(hpa *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	c.recorder.Event(hpa, v1.EventTypeWarning, reason, err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{
		Type:    autoscalingv2.ScalingActive,
		Status:  v1.ConditionFalse,
		Reason:  reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err),
	}
}
