package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
)

// externalClient reads external.metrics.k8s.io.
type externalClient struct {
	client rest.Interface
}

// GetExternalMetric implements Client.
func (c *externalClient) GetExternalMetric(ctx context.Context, metricName, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	list := &ExternalMetricValueList{}
	req := withSelectors(c.client.Get().Namespace(namespace).Resource(metricName), selector.String(), "")
	if err := into(req.Do(ctx), list); err != nil {
		return []int64{}, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from external metrics API")
	}
	res := make([]int64, 0, len(list.Items))
	for _, m := range list.Items {
		res = append(res, m.Value.MilliValue())
	}
	return res, list.Items[0].Timestamp.Time, nil
}
