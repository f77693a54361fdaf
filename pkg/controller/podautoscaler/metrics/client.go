package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// PodMetric is one pod's value of a metric, in milli-units, and when and
// over which window it was measured.
type PodMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// PodMetricsInfo maps pod names to their metric values.
type PodMetricsInfo map[string]PodMetric

// Client reads metrics for the replica calculation.
type Client interface {
	// GetResourceMetric returns the usage of resource by each pod the
	// selector selects (by its container named container, or the sum of
	// all its containers when container is empty), and the first pod's
	// timestamp. Pods without a value are left out, not an error.
	GetResourceMetric(ctx context.Context, resource v1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error)
	// GetRawMetric returns a custom metric of each pod the selector
	// selects, and the first value's timestamp.
	GetRawMetric(ctx context.Context, metricName, namespace string, selector, metricSelector labels.Selector) (PodMetricsInfo, time.Time, error)
	// GetObjectMetric returns a custom metric of one object of the
	// namespace (the namespace itself for kind Namespace).
	GetObjectMetric(ctx context.Context, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error)
	// GetExternalMetric returns the values of every series of an external
	// metric the selector selects, and the first one's timestamp.
	GetExternalMetric(ctx context.Context, metricName, namespace string, selector labels.Selector) ([]int64, time.Time, error)
}

// REST is the Client over the metrics APIs served by the kube-apiserver
// (through APIServices).
type REST struct {
	*resourceClient
	*customClient
	*externalClient
}

var _ Client = (*REST)(nil)

// NewREST builds the clients from cfg (copied). The custom metrics API's
// version is discovered through disco when first needed, and again after
// InvalidateVersions; kinds are mapped to resources with mapper. No API
// I/O happens here.
func NewREST(cfg *rest.Config, mapper meta.RESTMapper, disco discovery.DiscoveryInterface) (*REST, error) {
	res, err := restClientFor(cfg, ResourceGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to init the resource client: %w", err)
	}
	ext, err := restClientFor(cfg, ExternalGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to init the external metrics client: %w", err)
	}
	custom := &customClient{
		mapper:    mapper,
		versions:  &preferredVersion{disco: disco},
		newClient: func(gv schema.GroupVersion) (rest.Interface, error) { return restClientFor(cfg, gv) },
		clients:   map[schema.GroupVersion]rest.Interface{},
	}
	return &REST{&resourceClient{client: res}, custom, &externalClient{client: ext}}, nil
}

// restClientFor returns a REST client for one metrics API group version
// that asks for and reads JSON.
func restClientFor(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath = "/apis"
	c.GroupVersion = &gv
	c.ContentType = "application/json"
	c.AcceptContentTypes = "application/json"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

// into reads a request's response body as JSON into out; a failed request
// returns client-go's error (the Status the server sent, or one naming the
// resource as the request did), as the generated clients' Into does.
func into(res rest.Result, out any) error {
	body, err := rawBody(res)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decoding the metrics API's response: %w", err)
	}
	return nil
}

// withSelectors adds the labelSelector and metricLabelSelector parameters
// that are not empty, as the metrics clients' parameter codecs do.
func withSelectors(req *rest.Request, selector, metricSelector string) *rest.Request {
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	if metricSelector != "" {
		req = req.Param("metricLabelSelector", metricSelector)
	}
	return req
}

// rawBody returns the response body, or the request's error: a Status in
// the body if there is one.
func rawBody(res rest.Result) ([]byte, error) {
	if err := res.Error(); err != nil {
		return nil, err
	}
	return res.Raw()
}
