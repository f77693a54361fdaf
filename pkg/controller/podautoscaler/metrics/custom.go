package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// defaultMetricWindow is a custom metric's window when the server gives
// none (metrics-server's resolution).
const defaultMetricWindow = time.Minute

// customClient reads custom.metrics.k8s.io in the version the server
// prefers among those it knows.
type customClient struct {
	mapper    meta.RESTMapper
	versions  *preferredVersion
	newClient func(schema.GroupVersion) (rest.Interface, error)

	mu      sync.Mutex
	clients map[schema.GroupVersion]rest.Interface
}

// InvalidateVersions forgets the custom metrics API's preferred version;
// the next request discovers it again.
func (c *customClient) InvalidateVersions() { c.versions.invalidate() }

// GetRawMetric implements Client: the metric of every pod selector selects.
func (c *customClient) GetRawMetric(ctx context.Context, metricName, namespace string, selector, metricSelector labels.Selector) (PodMetricsInfo, time.Time, error) {
	list, err := c.getForObjects(ctx, namespace, schema.GroupKind{Kind: "Pod"}, selector, metricName, metricSelector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from custom metrics API")
	}
	res := make(PodMetricsInfo, len(list.Items))
	for _, m := range list.Items {
		window := defaultMetricWindow
		if m.WindowSeconds != nil {
			window = time.Duration(*m.WindowSeconds) * time.Second
		}
		res[m.DescribedObject.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: window, Value: m.Value.MilliValue()}
	}
	return res, list.Items[0].Timestamp.Time, nil
}

// GetObjectMetric implements Client. A Namespace reference means the
// HPA's own namespace, whatever its name says.
func (c *customClient) GetObjectMetric(ctx context.Context, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var value *MetricValue
	var err error
	if gvk.Kind == "Namespace" && gvk.Group == "" {
		value, err = c.getForNamespace(ctx, namespace, metricName, metricSelector)
	} else {
		value, err = c.getForObject(ctx, namespace, gvk.GroupKind(), ref.Name, metricName, metricSelector)
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return value.Value.MilliValue(), value.Timestamp.Time, nil
}

func (c *customClient) getForObjects(ctx context.Context, namespace string, gk schema.GroupKind, selector labels.Selector, metricName string, metricSelector labels.Selector) (*MetricValueList, error) {
	client, err := c.preferredClient()
	if err != nil {
		return nil, err
	}
	resource, err := c.qualifiedResource(gk)
	if err != nil {
		return nil, err
	}
	req := client.Get().Resource(resource).Namespace(namespace).Name(AllObjects).SubResource(metricName)
	return decodeMetricValues(withSelectors(req, selector.String(), metricSelector.String()).Do(ctx))
}

func (c *customClient) getForObject(ctx context.Context, namespace string, gk schema.GroupKind, name, metricName string, metricSelector labels.Selector) (*MetricValue, error) {
	client, err := c.preferredClient()
	if err != nil {
		return nil, err
	}
	resource, err := c.qualifiedResource(gk)
	if err != nil {
		return nil, err
	}
	req := client.Get().Resource(resource).Namespace(namespace).Name(name).SubResource(metricName)
	return single(decodeMetricValues(withSelectors(req, "", metricSelector.String()).Do(ctx)))
}

func (c *customClient) getForNamespace(ctx context.Context, namespace, metricName string, metricSelector labels.Selector) (*MetricValue, error) {
	client, err := c.preferredClient()
	if err != nil {
		return nil, err
	}
	req := client.Get().Resource("metrics").Namespace(namespace).Name(metricName)
	return single(decodeMetricValues(withSelectors(req, "", metricSelector.String()).Do(ctx)))
}

// single returns the only value of a list that must have exactly one.
func single(list *MetricValueList, err error) (*MetricValue, error) {
	if err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("the custom metrics API server returned %v results when we asked for exactly one", len(list.Items))
	}
	return &list.Items[0], nil
}

// qualifiedResource maps a kind to "resource.group" ("pods" for Pods).
func (c *customClient) qualifiedResource(gk schema.GroupKind) (string, error) {
	mapping, err := c.mapper.RESTMapping(gk)
	if err != nil {
		return "", fmt.Errorf("unable to map kind %s to resource: %v", gk.String(), err)
	}
	return mapping.Resource.GroupResource().String(), nil
}

// preferredClient returns the REST client of the preferred version.
func (c *customClient) preferredClient() (rest.Interface, error) {
	gv, err := c.versions.get()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.clients[gv]; ok {
		return client, nil
	}
	client, err := c.newClient(gv)
	if err != nil {
		return nil, err
	}
	c.clients[gv] = client
	return client, nil
}

// decodeMetricValues reads a MetricValueList of either version as v1beta2.
func decodeMetricValues(res rest.Result) (*MetricValueList, error) {
	body, err := rawBody(res)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(body, &tm); err != nil {
		return nil, err
	}
	if tm.Kind != "MetricValueList" {
		return nil, fmt.Errorf("the custom metrics API server didn't return MetricValueList, the type is %q", tm.Kind)
	}
	switch tm.APIVersion {
	case CustomV1beta2.String():
		list := &MetricValueList{}
		if err := json.Unmarshal(body, list); err != nil {
			return nil, err
		}
		return list, nil
	case CustomV1beta1.String():
		return decodeV1beta1(body)
	}
	return nil, fmt.Errorf("the custom metrics API server returned an unknown version %q", tm.APIVersion)
}

// decodeV1beta1 converts a v1beta1 list: the metric's name and selector
// move into MetricIdentifier.
func decodeV1beta1(body []byte) (*MetricValueList, error) {
	var old struct {
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []metricValueV1beta1 `json:"items"`
	}
	if err := json.Unmarshal(body, &old); err != nil {
		return nil, err
	}
	list := &MetricValueList{ListMeta: old.ListMeta, Items: make([]MetricValue, len(old.Items))}
	list.TypeMeta = metav1.TypeMeta{APIVersion: CustomV1beta2.String(), Kind: "MetricValueList"}
	for i, o := range old.Items {
		list.Items[i] = MetricValue{
			DescribedObject: o.DescribedObject,
			Metric:          MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Timestamp:       o.Timestamp,
			WindowSeconds:   o.WindowSeconds,
			Value:           o.Value,
		}
	}
	return list, nil
}
