package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

var ts = metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

// server answers the metrics paths with canned JSON and records requests.
type server struct {
	mu        sync.Mutex
	requests  []string
	responses map[string]any // path -> body (status 200)
	customGV  string         // the custom metrics group's preferred version
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.mu.Unlock()
	if r.URL.Path == "/apis" {
		groups := metav1.APIGroupList{}
		if s.customGV != "" {
			gv := metav1.GroupVersionForDiscovery{GroupVersion: s.customGV, Version: strings.TrimPrefix(s.customGV, CustomGroup+"/")}
			groups.Groups = append(groups.Groups, metav1.APIGroup{Name: CustomGroup, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
		}
		_ = json.NewEncoder(w).Encode(groups)
		return
	}
	if r.URL.Path == "/api" {
		_ = json.NewEncoder(w).Encode(metav1.APIVersions{})
		return
	}
	body, ok := s.responses[r.URL.Path]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonServiceUnavailable, Message: "service unavailable", Code: http.StatusServiceUnavailable})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func newTestClient(t *testing.T, s *server) *REST {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	cfg := &rest.Config{Host: hs.URL}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	c, err := NewREST(cfg, mapper, discovery.NewDiscoveryClientForConfigOrDie(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func cpu(m int64) v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(m, resource.DecimalSI)}
}

func TestResourceMetrics(t *testing.T) {
	s := &server{responses: map[string]any{"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods": PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: "metrics.k8s.io/v1beta1"},
		Items: []PodMetrics{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Timestamp: ts, Window: metav1.Duration{Duration: 30 * time.Second},
				Containers: []ContainerMetrics{{Name: "app", Usage: cpu(100)}, {Name: "side", Usage: cpu(50)}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Timestamp: ts, Containers: []ContainerMetrics{{Name: "app", Usage: cpu(300)}, {Name: "side", Usage: v1.ResourceList{}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Timestamp: ts},
		},
	}}}
	c := newTestClient(t, s)
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	got, when, err := c.GetResourceMetric(context.Background(), v1.ResourceCPU, "ns", sel, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["a"].Value != 150 || got["a"].Window != 30*time.Second || !when.Equal(ts.Time) {
		t.Errorf("pod sums: %+v at %v", got, when)
	}
	got, _, err = c.GetResourceMetric(context.Background(), v1.ResourceCPU, "ns", sel, "app")
	if err != nil || len(got) != 2 || got["b"].Value != 300 {
		t.Errorf("container app: %+v, %v", got, err)
	}
	if s.requests[0] != "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods?labelSelector=app%3Dweb" {
		t.Errorf("request %s", s.requests[0])
	}
	_, _, err = c.GetResourceMetric(context.Background(), v1.ResourceCPU, "other", sel, "")
	if err == nil || err.Error() != "unable to fetch metrics from resource metrics API: service unavailable" {
		t.Errorf("err = %v", err)
	}
}

func TestCustomMetrics(t *testing.T) {
	value := func(pod string, v int64) MetricValue {
		return MetricValue{DescribedObject: v1.ObjectReference{Kind: "Pod", Name: pod}, Metric: MetricIdentifier{Name: "qps"}, Timestamp: ts, Value: *resource.NewMilliQuantity(v, resource.DecimalSI)}
	}
	list := func(items ...MetricValue) MetricValueList {
		return MetricValueList{TypeMeta: metav1.TypeMeta{Kind: "MetricValueList", APIVersion: "custom.metrics.k8s.io/v1beta2"}, Items: items}
	}
	s := &server{customGV: "custom.metrics.k8s.io/v1beta2", responses: map[string]any{
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/qps":               list(value("a", 1500), value("b", 500)),
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/deployments.apps/web/qps": list(value("web", 7000)),
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/metrics/qps":              list(value("ns", 9000)),
	}}
	c := newTestClient(t, s)
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	got, _, err := c.GetRawMetric(context.Background(), "qps", "ns", sel, labels.Everything())
	if err != nil || got["a"].Value != 1500 || got["a"].Window != time.Minute {
		t.Fatalf("pods: %+v, %v", got, err)
	}
	v, _, err := c.GetObjectMetric(context.Background(), "qps", "ns", &autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, sel)
	if err != nil || v != 7000 {
		t.Errorf("object: %d, %v", v, err)
	}
	v, _, err = c.GetObjectMetric(context.Background(), "qps", "ns", &autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "whatever"}, labels.Everything())
	if err != nil || v != 9000 {
		t.Errorf("namespace: %d, %v", v, err)
	}
	want := []string{"/api?timeout=32s", "/apis?timeout=32s", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/%2A/qps?labelSelector=app%3Dweb",
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/deployments.apps/web/qps?metricLabelSelector=app%3Dweb",
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/metrics/qps"}
	if strings.Join(s.requests, " ") != strings.Join(want, " ") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(s.requests, "\n"), strings.Join(want, "\n"))
	}
	_, _, err = c.GetObjectMetric(context.Background(), "qps", "ns", &autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}, sel)
	if err == nil || !strings.HasPrefix(err.Error(), "unable to fetch metrics from custom metrics API: unable to map kind Widget.example.com to resource: ") {
		t.Errorf("unmapped kind: %v", err)
	}
}

func TestCustomMetricsV1beta1(t *testing.T) {
	s := &server{customGV: "custom.metrics.k8s.io/v1beta1", responses: map[string]any{
		"/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/*/qps": map[string]any{
			"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta1",
			"items": []any{map[string]any{"describedObject": map[string]any{"kind": "Pod", "name": "a"}, "metricName": "qps", "timestamp": ts, "window": 30, "value": "2"}},
		},
	}}
	c := newTestClient(t, s)
	got, _, err := c.GetRawMetric(context.Background(), "qps", "ns", labels.Everything(), labels.Everything())
	if err != nil || got["a"].Value != 2000 || got["a"].Window != 30*time.Second {
		t.Fatalf("%+v, %v", got, err)
	}
	// No custom metrics API at all.
	s.customGV = ""
	c.InvalidateVersions()
	_, _, err = c.GetRawMetric(context.Background(), "qps", "ns", labels.Everything(), labels.Everything())
	if err == nil || err.Error() != "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered" {
		t.Errorf("err = %v", err)
	}
}

func TestExternalMetrics(t *testing.T) {
	s := &server{responses: map[string]any{"/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue": ExternalMetricValueList{
		TypeMeta: metav1.TypeMeta{Kind: "ExternalMetricValueList", APIVersion: "external.metrics.k8s.io/v1beta1"},
		Items: []ExternalMetricValue{
			{MetricName: "queue", Timestamp: ts, Value: resource.MustParse("3")},
			{MetricName: "queue", Timestamp: ts, Value: resource.MustParse("500m")},
		},
	}}}
	c := newTestClient(t, s)
	got, _, err := c.GetExternalMetric(context.Background(), "queue", "ns", labels.SelectorFromSet(labels.Set{"q": "jobs"}))
	if err != nil || len(got) != 2 || got[0]+got[1] != 3500 {
		t.Fatalf("%v, %v", got, err)
	}
	if s.requests[0] != "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue?labelSelector=q%3Djobs" {
		t.Errorf("request %s", s.requests[0])
	}
	_, _, err = c.GetExternalMetric(context.Background(), "none", "ns", labels.Everything())
	if err == nil || !strings.HasPrefix(err.Error(), "unable to fetch metrics from external metrics API: ") {
		t.Errorf("err = %v", err)
	}
}

func TestUtilization(t *testing.T) {
	m := PodMetricsInfo{"a": {Value: 500}, "b": {Value: 1500}, "stray": {Value: 9000}}
	ratio, util, avg, err := ResourceUtilizationRatio(m, map[string]int64{"a": 1000, "b": 1000}, 50)
	if err != nil || util != 100 || ratio != 2 || avg != 1000 {
		t.Errorf("%v %d %d %v", ratio, util, avg, err)
	}
	if _, _, _, err := ResourceUtilizationRatio(m, map[string]int64{}, 50); err == nil {
		t.Error("no requests: no error")
	}
	ratio, avg = UsageRatio(PodMetricsInfo{"a": {Value: 10}, "b": {Value: 21}}, 10)
	if avg != 15 || ratio != 1.5 {
		t.Errorf("%v %d", ratio, avg)
	}
}
