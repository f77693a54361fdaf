package metricsapi

import (
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
)

var (
	resourceGV = metrics.ResourceGroupVersion
	customGV   = metrics.CustomV1beta2
	externalGV = metrics.ExternalGroupVersion
)

// discovery is a group version's legacy discovery document.
func discovery(gv schema.GroupVersion, resources ...metav1.APIResource) *metav1.APIResourceList {
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: append([]metav1.APIResource{}, resources...),
	}
}

// resourceMetrics answers metrics.k8s.io/v1beta1: discovery, and the
// PodMetrics of a namespace's pods (list) or of one pod.
func (s *Server) resourceMetrics(r *http.Request, path []string) (any, error) {
	switch {
	case len(path) == 0:
		return discovery(resourceGV, metav1.APIResource{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}}), nil
	case len(path) >= 3 && path[0] == "namespaces" && path[2] == "pods" && len(path) <= 4:
		pods, err := s.runningPods(r.Context(), path[1], r.URL.Query().Get("labelSelector"))
		if err != nil {
			return nil, err
		}
		values := s.snapshot()
		now := metav1.NewTime(time.Now())
		list := &metrics.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: resourceGV.String()}, Items: []metrics.PodMetrics{}}
		for _, p := range pods {
			if len(path) == 4 && p.Name != path[3] {
				continue
			}
			if pm, ok := s.podMetrics(values.Usage, &p, now); ok {
				list.Items = append(list.Items, pm)
			}
		}
		if len(path) == 4 {
			if len(list.Items) == 0 {
				return nil, apierrors.NewNotFound(schema.GroupResource{Group: resourceGV.Group, Resource: "pods"}, path[3])
			}
			pm := list.Items[0]
			pm.TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: resourceGV.String()}
			return pm, nil
		}
		return list, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: resourceGV.Group}, r.URL.Path)
}

// podMetrics is the pod's sample: each container's usage from the last
// entry that matches it; no sample if none matches any container.
func (s *Server) podMetrics(usage []Usage, p *v1.Pod, now metav1.Time) (metrics.PodMetrics, bool) {
	pm := metrics.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, CreationTimestamp: now},
		Timestamp:  now,
		Window:     metav1.Duration{Duration: s.opts.Window},
	}
	found := false
	for _, c := range p.Spec.Containers {
		var res v1.ResourceList
		for _, u := range usage {
			if u.Namespace == p.Namespace && (u.Container == "" || u.Container == c.Name) && selects(u.Selector, p.Labels) {
				res = u.Resources
			}
		}
		if res != nil {
			found = true
		}
		pm.Containers = append(pm.Containers, metrics.ContainerMetrics{Name: c.Name, Usage: res.DeepCopy()})
	}
	return pm, found
}

// customMetrics answers custom.metrics.k8s.io/v1beta2: discovery, a
// metric of the pods a selector selects (name "*"), of one object, or of
// the namespace (namespaces/<ns>/metrics/<metric>).
func (s *Server) customMetrics(r *http.Request, path []string) (any, error) {
	if len(path) == 0 {
		return discovery(customGV), nil
	}
	if len(path) != 4 && len(path) != 5 || path[0] != "namespaces" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: customGV.Group}, r.URL.Path)
	}
	// Not found: the metric, of the resource asked for.
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: customGV.Group, Resource: path[2]}, path[len(path)-1])
	ns := path[1]
	list := &metrics.MetricValueList{TypeMeta: metav1.TypeMeta{Kind: "MetricValueList", APIVersion: customGV.String()}, Items: []metrics.MetricValue{}}
	now := metav1.NewTime(time.Now())
	values := s.snapshot().Custom
	window := int64(s.opts.Window / time.Second)
	add := func(obj v1.ObjectReference, c Custom) {
		list.Items = append(list.Items, metrics.MetricValue{
			DescribedObject: obj, Metric: metrics.MetricIdentifier{Name: c.Metric},
			Timestamp: now, WindowSeconds: &window, Value: c.Value,
		})
	}
	switch {
	case len(path) == 4 && path[2] == "metrics": // the namespace's own metric
		for _, c := range values {
			if c.Namespace == ns && c.Resource == "namespaces" && c.Metric == path[3] {
				add(v1.ObjectReference{Kind: "Namespace", Name: ns, APIVersion: "/v1"}, c)
			}
		}
	case len(path) == 5 && path[2] == "pods" && path[3] == "*":
		pods, err := s.runningPods(r.Context(), ns, r.URL.Query().Get("labelSelector"))
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			if c, ok := lastPodsValue(values, &p, path[4]); ok {
				add(v1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name, APIVersion: "/v1"}, c)
			}
		}
	case len(path) == 5:
		for _, c := range values {
			if c.Namespace == ns && c.Resource == path[2] && c.Name == path[3] && c.Metric == path[4] {
				add(v1.ObjectReference{Namespace: ns, Name: c.Name}, c)
			}
		}
	}
	if len(list.Items) == 0 {
		return nil, notFound
	}
	return list, nil
}

// lastPodsValue is the last "pods" value of metric whose selector selects p.
func lastPodsValue(values []Custom, p *v1.Pod, metric string) (Custom, bool) {
	var out Custom
	found := false
	for _, c := range values {
		if c.Namespace == p.Namespace && c.Resource == "pods" && c.Metric == metric && selects(c.Selector, p.Labels) {
			out, found = c, true
		}
	}
	return out, found
}

// externalMetrics answers external.metrics.k8s.io/v1beta1: discovery, and
// the series of a metric its labelSelector selects.
func (s *Server) externalMetrics(r *http.Request, path []string) (any, error) {
	if len(path) == 0 {
		return discovery(externalGV), nil
	}
	if len(path) != 3 || path[0] != "namespaces" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: externalGV.Group}, r.URL.Path)
	}
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	list := &metrics.ExternalMetricValueList{TypeMeta: metav1.TypeMeta{Kind: "ExternalMetricValueList", APIVersion: externalGV.String()}, Items: []metrics.ExternalMetricValue{}}
	now := metav1.NewTime(time.Now())
	for _, e := range s.snapshot().External {
		if e.Namespace == path[1] && e.Metric == path[2] && sel.Matches(labels.Set(e.Labels)) {
			list.Items = append(list.Items, metrics.ExternalMetricValue{MetricName: e.Metric, MetricLabels: e.Labels, Timestamp: now, Value: e.Value})
		}
	}
	return list, nil
}
