package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// resourceClient reads metrics.k8s.io PodMetrics.
type resourceClient struct {
	client rest.Interface
}

// GetResourceMetric implements Client.
func (c *resourceClient) GetResourceMetric(ctx context.Context, resource v1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error) {
	list := &PodMetricsList{}
	req := withSelectors(c.client.Get().Namespace(namespace).Resource("pods"), selector.String(), "")
	if err := into(req.Do(ctx), list); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	var res PodMetricsInfo
	if container != "" {
		res = containerMetrics(ctx, list.Items, resource, container)
	} else {
		res = podMetrics(ctx, list.Items, resource)
	}
	return res, list.Items[0].Timestamp.Time, nil
}

// containerMetrics takes each pod's usage of resource by the named
// container; pods without that container or value are left out.
func containerMetrics(ctx context.Context, items []PodMetrics, resource v1.ResourceName, container string) PodMetricsInfo {
	res := make(PodMetricsInfo, len(items))
	for _, m := range items {
		found := false
		for _, c := range m.Containers {
			if c.Name != container {
				continue
			}
			found = true
			if val, ok := c.Usage[resource]; ok {
				res[m.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: val.MilliValue()}
			}
			break
		}
		if !found {
			klog.FromContext(ctx).V(2).Info("Missing container metric", "container", container, "pod", klog.KRef(m.Namespace, m.Name))
		}
	}
	return res
}

// podMetrics sums each pod's containers' usage of resource; a pod with no
// containers, or one container without the value, is left out.
func podMetrics(ctx context.Context, items []PodMetrics, resource v1.ResourceName) PodMetricsInfo {
	res := make(PodMetricsInfo, len(items))
	for _, m := range items {
		sum := int64(0)
		missing := len(m.Containers) == 0
		for _, c := range m.Containers {
			val, ok := c.Usage[resource]
			if !ok {
				missing = true
				klog.FromContext(ctx).V(2).Info("Missing resource metric", "resourceMetric", resource, "pod", klog.KRef(m.Namespace, m.Name))
				break
			}
			sum += val.MilliValue()
		}
		if !missing {
			res[m.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: sum}
		}
	}
	return res
}
