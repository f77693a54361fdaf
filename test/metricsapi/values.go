package metricsapi

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// Values are metric values a test sets. Set replaces entries with the
// same key (given in each type's comment) and appends the others.
type Values struct {
	Usage    []Usage    `json:"usage,omitempty"`
	Custom   []Custom   `json:"custom,omitempty"`
	External []External `json:"external,omitempty"`
	// Unavailable, when set, switches the metrics (not discovery) to
	// answering 503 Service Unavailable, as a backend that lost its source
	// does, or back.
	Unavailable *bool `json:"unavailable,omitempty"`
}

// Usage is the resource usage of the containers (all, or the named one) of
// the pods Selector selects in Namespace. Key: namespace, selector,
// container. For a pod several entries match, the last set wins per
// container.
type Usage struct {
	Namespace string          `json:"namespace"`
	Selector  string          `json:"selector,omitempty"`
	Container string          `json:"container,omitempty"`
	Resources v1.ResourceList `json:"resources"`
}

// Custom is a custom metric's value. Resource "pods" with Selector: every
// pod it selects (Name empty); another resource ("deployments.apps",
// "services"): the object Name; "namespaces": the namespace itself.
// Key: namespace, resource, name, selector, metric.
type Custom struct {
	Namespace string            `json:"namespace"`
	Resource  string            `json:"resource"`
	Name      string            `json:"name,omitempty"`
	Selector  string            `json:"selector,omitempty"`
	Metric    string            `json:"metric"`
	Value     resource.Quantity `json:"value"`
}

// External is one series of an external metric. Key: namespace, metric,
// labels.
type External struct {
	Namespace string            `json:"namespace"`
	Metric    string            `json:"metric"`
	Labels    map[string]string `json:"labels,omitempty"`
	Value     resource.Quantity `json:"value"`
}

func (u Usage) key() string {
	return u.Namespace + "|" + u.Selector + "|" + u.Container
}

func (c Custom) key() string {
	return c.Namespace + "|" + c.Resource + "|" + c.Name + "|" + c.Selector + "|" + c.Metric
}

func (e External) key() string {
	return e.Namespace + "|" + e.Metric + "|" + labels.Set(e.Labels).String()
}

// upsert replaces the entries of list with the keys of add and appends
// the rest.
func upsert[T interface{ key() string }](list []T, add []T) []T {
	for _, a := range add {
		replaced := false
		for i := range list {
			if list[i].key() == a.key() {
				list[i], replaced = a, true
			}
		}
		if !replaced {
			list = append(list, a)
		}
	}
	return list
}

// selects reports whether selector (empty: everything) selects set.
func selects(selector string, set labels.Set) bool {
	if selector == "" {
		return true
	}
	sel, err := labels.Parse(selector)
	return err == nil && sel.Matches(set)
}
