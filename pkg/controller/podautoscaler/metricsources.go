package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

type condition = autoscalingv2.HorizontalPodAutoscalerCondition

func milli(v int64) *resource.Quantity { return resource.NewMilliQuantity(v, resource.DecimalSI) }

// objectMetric: a metric of one object, against a total value (times the
// ready pods' share) or an average value per replica.
func (c *Controller) objectMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, condition, error) {
	src := spec.Object
	metricSelector, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return proposal{}, c.unableToCompute(hpa, "FailedGetObjectMetric", err), err
	}
	st := autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
		DescribedObject: src.DescribedObject,
		Metric:          autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector},
	}}
	tol := c.tolerancesFor(hpa)
	switch {
	case src.Target.Type == autoscalingv2.ValueMetricType && src.Target.Value != nil:
		replicas, usage, ts, err := c.calc.objectReplicas(ctx, specReplicas, src.Target.Value.MilliValue(), src.Metric.Name, tol, hpa.Namespace, &src.DescribedObject, selector, metricSelector)
		if err != nil {
			return proposal{}, c.unableToCompute(hpa, "FailedGetObjectMetric", err), err
		}
		st.Object.Current.Value = milli(usage)
		*status = st
		return proposal{replicas, fmt.Sprintf("%s metric %s", src.DescribedObject.Kind, src.Metric.Name), ts}, condition{}, nil
	case src.Target.Type == autoscalingv2.AverageValueMetricType && src.Target.AverageValue != nil:
		replicas, usage, ts, err := c.calc.objectPerPodReplicas(ctx, statusReplicas, src.Target.AverageValue.MilliValue(), src.Metric.Name, tol, hpa.Namespace, &src.DescribedObject, metricSelector)
		if err != nil {
			return proposal{}, c.unableToCompute(hpa, "FailedGetObjectMetric", err), fmt.Errorf("failed to get %s object metric: %w", src.Metric.Name, err)
		}
		st.Object.Current.AverageValue = milli(usage)
		*status = st
		// Upstream's description, "external" included.
		return proposal{replicas, fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector), ts}, condition{}, nil
	}
	err = errors.New("invalid object metric source: neither a value target nor an average value target was set")
	return proposal{}, c.unableToCompute(hpa, "FailedGetObjectMetric", err), err
}

// podsMetric: a custom metric of each pod, against an average value.
func (c *Controller) podsMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, currentReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, condition, error) {
	src := spec.Pods
	metricSelector, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return proposal{}, c.unableToCompute(hpa, "FailedGetPodsMetric", err), err
	}
	replicas, usage, ts, err := c.calc.podsMetricReplicas(ctx, currentReplicas, src.Target.AverageValue.MilliValue(), src.Metric.Name, c.tolerancesFor(hpa), hpa.Namespace, selector, metricSelector)
	if err != nil {
		return proposal{}, c.unableToCompute(hpa, "FailedGetPodsMetric", err), err
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
		Metric:  autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector},
		Current: autoscalingv2.MetricValueStatus{AverageValue: milli(usage)},
	}}
	return proposal{replicas, fmt.Sprintf("pods metric %s", src.Metric.Name), ts}, condition{}, nil
}

// resourceMetric: a resource's usage summed over each pod's containers.
func (c *Controller) resourceMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, currentReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, condition, error) {
	src := spec.Resource
	p, current, err := c.resourceUsage(ctx, hpa, currentReplicas, src.Target, src.Name, "", selector, "resource")
	if err != nil {
		return proposal{}, c.unableToCompute(hpa, "FailedGetResourceMetric", err), err
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: src.Name, Current: current}}
	return p, condition{}, nil
}

// containerResourceMetric: a resource's usage by one container of each pod.
func (c *Controller) containerResourceMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, currentReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, condition, error) {
	src := spec.ContainerResource
	p, current, err := c.resourceUsage(ctx, hpa, currentReplicas, src.Target, src.Name, src.Container, selector, "container resource")
	if err != nil {
		return proposal{}, c.unableToCompute(hpa, "FailedGetContainerResourceMetric", err), err
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
		Name: src.Name, Container: src.Container, Current: current,
	}}
	return p, condition{}, nil
}

// resourceUsage computes a resource metric against an average value or an
// average utilization of the requests. what names the metric in the
// utilization's description ("resource", "container resource").
func (c *Controller) resourceUsage(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, currentReplicas int32, target autoscalingv2.MetricTarget, name v1.ResourceName, container string, selector labels.Selector, what string) (proposal, autoscalingv2.MetricValueStatus, error) {
	tol := c.tolerancesFor(hpa)
	if target.AverageValue != nil {
		replicas, usage, ts, err := c.calc.rawResourceReplicas(ctx, currentReplicas, target.AverageValue.MilliValue(), name, tol, hpa.Namespace, selector, container)
		if err != nil {
			return proposal{}, autoscalingv2.MetricValueStatus{}, fmt.Errorf("failed to get %s usage: %w", name, err)
		}
		q := usageQuantity(name, usage)
		return proposal{replicas, fmt.Sprintf("%s resource", name), ts}, autoscalingv2.MetricValueStatus{AverageValue: &q}, nil
	}
	if target.AverageUtilization == nil {
		return proposal{}, autoscalingv2.MetricValueStatus{}, errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	replicas, utilization, usage, ts, err := c.calc.resourceReplicas(ctx, currentReplicas, *target.AverageUtilization, name, tol, hpa.Namespace, selector, container)
	if err != nil {
		return proposal{}, autoscalingv2.MetricValueStatus{}, fmt.Errorf("failed to get %s utilization: %w", name, err)
	}
	q := usageQuantity(name, usage)
	desc := fmt.Sprintf("%s %s utilization (percentage of request)", name, what)
	return proposal{replicas, desc, ts}, autoscalingv2.MetricValueStatus{AverageUtilization: &utilization, AverageValue: &q}, nil
}

// usageQuantity formats a resource's usage as metrics-server does: memory
// in binary units, everything else in decimal.
func usageQuantity(name v1.ResourceName, milliValue int64) resource.Quantity {
	format := resource.DecimalSI
	if name == v1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milliValue, format)
}

// externalMetric: an external metric's series summed, against a total
// value (times the ready pods' share) or an average value per replica.
func (c *Controller) externalMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, condition, error) {
	src := spec.External
	tol := c.tolerancesFor(hpa)
	desc := fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector)
	st := func(current autoscalingv2.MetricValueStatus) autoscalingv2.MetricStatus {
		return autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
			Metric: autoscalingv2.MetricIdentifier{Name: src.Metric.Name, Selector: src.Metric.Selector}, Current: current,
		}}
	}
	if src.Target.AverageValue != nil {
		replicas, usage, ts, err := c.calc.externalPerPodReplicas(ctx, statusReplicas, src.Target.AverageValue.MilliValue(), src.Metric.Name, tol, hpa.Namespace, src.Metric.Selector)
		if err != nil {
			return proposal{}, c.unableToCompute(hpa, "FailedGetExternalMetric", err), fmt.Errorf("failed to get %s external metric: %w", src.Metric.Name, err)
		}
		*status = st(autoscalingv2.MetricValueStatus{AverageValue: milli(usage)})
		return proposal{replicas, desc, ts}, condition{}, nil
	}
	if src.Target.Value != nil {
		replicas, usage, ts, err := c.calc.externalReplicas(ctx, specReplicas, src.Target.Value.MilliValue(), src.Metric.Name, tol, hpa.Namespace, src.Metric.Selector, selector)
		if err != nil {
			return proposal{}, c.unableToCompute(hpa, "FailedGetExternalMetric", err), fmt.Errorf("failed to get external metric %s: %w", src.Metric.Name, err)
		}
		*status = st(autoscalingv2.MetricValueStatus{Value: milli(usage)})
		return proposal{replicas, desc, ts}, condition{}, nil
	}
	err := errors.New("invalid external metric source: neither a value target nor an average value target was set")
	return proposal{}, c.unableToCompute(hpa, "FailedGetExternalMetric", err), err
}
