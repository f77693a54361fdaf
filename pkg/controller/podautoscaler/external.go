package podautoscaler

import (
	"context"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// externalReplicas is the count for a target total value of an external
// metric (the sum of the selected series).
func (c *replicaCalculator) externalReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName string, tol Tolerances, namespace string, metricSelector *metav1.LabelSelector, podSelector labels.Selector) (replicas int32, usage int64, timestamp time.Time, err error) {
	sel, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	values, _, err := c.metrics.GetExternalMetric(ctx, metricName, namespace, sel)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metricName, metricSelector, err)
	}
	for _, v := range values {
		if v > 0 && usage > math.MaxInt64-v {
			usage = math.MaxInt64
			break
		}
		usage += v
	}
	ratio := float64(usage) / float64(targetUsage)
	replicas, timestamp, err = c.ratioReplicas(currentReplicas, ratio, tol, namespace, podSelector)
	return replicas, usage, timestamp, err
}

// externalPerPodReplicas is the count for a target average value per pod
// of an external metric.
func (c *replicaCalculator) externalPerPodReplicas(ctx context.Context, statusReplicas int32, targetPerPod int64, metricName string, tol Tolerances, namespace string, metricSelector *metav1.LabelSelector) (replicas int32, usage int64, timestamp time.Time, err error) {
	sel, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	values, timestamp, err := c.metrics.GetExternalMetric(ctx, metricName, namespace, sel)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metricName, metricSelector, err)
	}
	for _, v := range values {
		usage += v
		if usage < 0 {
			usage = math.MaxInt64
			break
		}
	}
	replicas = statusReplicas
	ratio := float64(usage) / (float64(targetPerPod) * float64(replicas))
	if !tol.isWithin(ratio) {
		r := math.Ceil(float64(usage) / float64(targetPerPod))
		if r > float64(math.MaxInt32) {
			replicas = math.MaxInt32
		} else {
			replicas = int32(r)
		}
	}
	if float64(usage) >= float64(math.MaxInt64) {
		usage = math.MaxInt64
	} else {
		usage = int64(math.Ceil(float64(usage) / float64(statusReplicas)))
	}
	return replicas, usage, timestamp, nil
}
