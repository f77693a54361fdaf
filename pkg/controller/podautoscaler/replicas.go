package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
)

var errNoPods = errors.New("no pods returned by selector while calculating replica count")

// replicaCalculator turns metric values into replica counts.
type replicaCalculator struct {
	metrics metrics.Client
	pods    corelisters.PodLister
	clock   clock.PassiveClock

	cpuInitializationPeriod time.Duration
	initialReadinessDelay   time.Duration
	podLevelResources       bool
}

// resourceReplicas is the count for a target utilization (percent of the
// request) of resource, with the current utilization and average usage.
func (c *replicaCalculator) resourceReplicas(ctx context.Context, currentReplicas, targetUtilization int32, resource v1.ResourceName, tol Tolerances, namespace string, selector labels.Selector, container string) (replicas, utilization int32, rawUtilization int64, timestamp time.Time, err error) {
	m, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", resource, err)
	}
	pods, err := c.pods.Pods(namespace).List(selector)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	if len(pods) == 0 {
		return 0, 0, 0, time.Time{}, errNoPods
	}
	g := groupPods(pods, m, resource, c.cpuInitializationPeriod, c.initialReadinessDelay, c.clock.Now())
	removeMetrics(m, g.ignored)
	removeMetrics(m, g.unready)
	if len(m) == 0 {
		return 0, 0, 0, time.Time{}, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := podRequests(pods, container, resource, c.podLevelResources)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	ratio, utilization, rawUtilization, err := metrics.ResourceUtilizationRatio(m, requests, targetUtilization)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if tol.isWithin(ratio) {
			return currentReplicas, utilization, rawUtilization, timestamp, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), utilization, rawUtilization, timestamp, nil
	}
	// Fill in the missing and unready pods' values and compute again.
	for pod := range g.missing {
		switch {
		case ratio < 1.0:
			m[pod] = metrics.PodMetric{Value: requests[pod] * int64(max(100, targetUtilization)) / 100}
		case ratio > 1.0:
			m[pod] = metrics.PodMetric{Value: 0}
		}
	}
	if scaleUpWithUnready {
		for pod := range g.unready {
			m[pod] = metrics.PodMetric{Value: 0}
		}
	}
	newRatio, _, _, err := metrics.ResourceUtilizationRatio(m, requests, targetUtilization)
	if err != nil {
		return 0, utilization, rawUtilization, time.Time{}, err
	}
	return adjusted(currentReplicas, ratio, newRatio, len(m), tol), utilization, rawUtilization, timestamp, nil
}

// adjusted is the count after missing and unready pods were filled in:
// the current count if the new ratio is within tolerance or points the
// other way than the first, or if the count would move against it.
func adjusted(currentReplicas int32, ratio, newRatio float64, counted int, tol Tolerances) int32 {
	if tol.isWithin(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return currentReplicas
	}
	n := int32(math.Ceil(newRatio * float64(counted)))
	if (newRatio < 1.0 && n > currentReplicas) || (newRatio > 1.0 && n < currentReplicas) {
		return currentReplicas
	}
	return n
}

// rawResourceReplicas is the count for a target average usage of resource.
func (c *replicaCalculator) rawResourceReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, resource v1.ResourceName, tol Tolerances, namespace string, selector labels.Selector, container string) (replicas int32, usage int64, timestamp time.Time, err error) {
	m, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", resource, err)
	}
	replicas, usage, err = c.plainReplicas(m, currentReplicas, targetUsage, tol, namespace, selector, resource)
	return replicas, usage, timestamp, err
}

// podsMetricReplicas is the count for a target average of a pods metric.
func (c *replicaCalculator) podsMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName string, tol Tolerances, namespace string, selector, metricSelector labels.Selector) (replicas int32, usage int64, timestamp time.Time, err error) {
	m, timestamp, err := c.metrics.GetRawMetric(ctx, metricName, namespace, selector, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %w", metricName, err)
	}
	replicas, usage, err = c.plainReplicas(m, currentReplicas, targetUsage, tol, namespace, selector, "")
	return replicas, usage, timestamp, err
}

// plainReplicas is the count for a target average value (not a
// utilization); a missing pod counts as at the target on a scale-down.
func (c *replicaCalculator) plainReplicas(m metrics.PodMetricsInfo, currentReplicas int32, targetUsage int64, tol Tolerances, namespace string, selector labels.Selector, resource v1.ResourceName) (int32, int64, error) {
	pods, err := c.pods.Pods(namespace).List(selector)
	if err != nil {
		return 0, 0, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	if len(pods) == 0 {
		return 0, 0, errNoPods
	}
	g := groupPods(pods, m, resource, c.cpuInitializationPeriod, c.initialReadinessDelay, c.clock.Now())
	removeMetrics(m, g.ignored)
	removeMetrics(m, g.unready)
	if len(m) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, usage := metrics.UsageRatio(m, targetUsage)
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if tol.isWithin(ratio) {
			return currentReplicas, usage, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), usage, nil
	}
	for pod := range g.missing {
		switch {
		case ratio < 1.0:
			m[pod] = metrics.PodMetric{Value: targetUsage}
		case ratio > 1.0:
			m[pod] = metrics.PodMetric{Value: 0}
		}
	}
	if scaleUpWithUnready {
		for pod := range g.unready {
			m[pod] = metrics.PodMetric{Value: 0}
		}
	}
	newRatio, _ := metrics.UsageRatio(m, targetUsage)
	return adjusted(currentReplicas, ratio, newRatio, len(m), tol), usage, nil
}

// objectReplicas is the count for a target value of an object's metric:
// the ratio times the ready pods.
func (c *replicaCalculator) objectReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName string, tol Tolerances, namespace string, ref *autoscalingv2.CrossVersionObjectReference, selector, metricSelector labels.Selector) (replicas int32, usage int64, timestamp time.Time, err error) {
	usage, _, err = c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metricName, ref.Kind, namespace, ref.Name, err)
	}
	ratio := float64(usage) / float64(targetUsage)
	replicas, timestamp, err = c.ratioReplicas(currentReplicas, ratio, tol, namespace, selector)
	return replicas, usage, timestamp, err
}

// ratioReplicas is the ready pods times ratio, or the current count within
// tolerance; from zero replicas, ratio rounded up (scale from zero).
// Its timestamp is always zero, as upstream's.
func (c *replicaCalculator) ratioReplicas(currentReplicas int32, ratio float64, tol Tolerances, namespace string, selector labels.Selector) (int32, time.Time, error) {
	if currentReplicas == 0 {
		return int32(math.Ceil(ratio)), time.Time{}, nil
	}
	if tol.isWithin(ratio) {
		return currentReplicas, time.Time{}, nil
	}
	ready, err := c.readyPods(namespace, selector)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to calculate ready pods: %s", err)
	}
	f := ratio * float64(ready)
	if f > math.MaxInt32 {
		return math.MaxInt32, time.Time{}, nil
	}
	return int32(math.Ceil(f)), time.Time{}, nil
}

// objectPerPodReplicas is the count for a target average value per pod of
// an object's metric.
func (c *replicaCalculator) objectPerPodReplicas(ctx context.Context, statusReplicas int32, targetAverage int64, metricName string, tol Tolerances, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (replicas int32, usage int64, timestamp time.Time, err error) {
	usage, timestamp, err = c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metricName, ref.Kind, namespace, ref.Name, err)
	}
	replicas = statusReplicas
	ratio := float64(usage) / (float64(targetAverage) * float64(replicas))
	if !tol.isWithin(ratio) {
		replicas = int32(math.Ceil(float64(usage) / float64(targetAverage)))
	}
	usage = int64(math.Ceil(float64(usage) / float64(statusReplicas)))
	return replicas, usage, timestamp, nil
}

// readyPods counts the selected pods that are running and ready.
func (c *replicaCalculator) readyPods(namespace string, selector labels.Selector) (int64, error) {
	pods, err := c.pods.Pods(namespace).List(selector)
	if err != nil {
		return 0, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	if len(pods) == 0 {
		return 0, errNoPods
	}
	var n int64
	for _, p := range pods {
		if p.Status.Phase == v1.PodRunning && podranking.IsReady(p) {
			n++
		}
	}
	return n, nil
}
