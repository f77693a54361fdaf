package metrics

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The metrics APIs' groups and the versions this package speaks.
var (
	ResourceGroupVersion = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	CustomGroup          = "custom.metrics.k8s.io"
	CustomV1beta2        = schema.GroupVersion{Group: CustomGroup, Version: "v1beta2"}
	CustomV1beta1        = schema.GroupVersion{Group: CustomGroup, Version: "v1beta1"}
	ExternalGroupVersion = schema.GroupVersion{Group: "external.metrics.k8s.io", Version: "v1beta1"}
)

// AllObjects is the object name that asks the custom metrics API for every
// object its label selector selects.
const AllObjects = "*"

// PodMetrics is metrics.k8s.io/v1beta1 PodMetrics: the resource usage of
// a pod's containers over [Timestamp-Window, Timestamp].
type PodMetrics struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Timestamp         metav1.Time        `json:"timestamp"`
	Window            metav1.Duration    `json:"window"`
	Containers        []ContainerMetrics `json:"containers"`
}

// ContainerMetrics is one container's usage.
type ContainerMetrics struct {
	Name  string          `json:"name"`
	Usage v1.ResourceList `json:"usage"`
}

// PodMetricsList is metrics.k8s.io/v1beta1 PodMetricsList.
type PodMetricsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodMetrics `json:"items"`
}

// MetricIdentifier names a custom metric (v1beta2).
type MetricIdentifier struct {
	Name     string                `json:"name"`
	Selector *metav1.LabelSelector `json:"selector"`
}

// MetricValue is custom.metrics.k8s.io/v1beta2 MetricValue: one object's
// value of a metric.
type MetricValue struct {
	metav1.TypeMeta `json:",inline"`
	DescribedObject v1.ObjectReference `json:"describedObject"`
	Metric          MetricIdentifier   `json:"metric"`
	Timestamp       metav1.Time        `json:"timestamp"`
	WindowSeconds   *int64             `json:"windowSeconds,omitempty"`
	Value           resource.Quantity  `json:"value"`
}

// MetricValueList is custom.metrics.k8s.io/v1beta2 MetricValueList.
type MetricValueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MetricValue `json:"items"`
}

// metricValueV1beta1 is custom.metrics.k8s.io/v1beta1 MetricValue, read
// from servers that prefer that version and converted to MetricValue.
type metricValueV1beta1 struct {
	DescribedObject v1.ObjectReference    `json:"describedObject"`
	MetricName      string                `json:"metricName"`
	Timestamp       metav1.Time           `json:"timestamp"`
	WindowSeconds   *int64                `json:"window,omitempty"`
	Value           resource.Quantity     `json:"value"`
	Selector        *metav1.LabelSelector `json:"selector"`
}

// ExternalMetricValue is external.metrics.k8s.io/v1beta1
// ExternalMetricValue: one time series of an external metric.
type ExternalMetricValue struct {
	metav1.TypeMeta `json:",inline"`
	MetricName      string            `json:"metricName"`
	MetricLabels    map[string]string `json:"metricLabels"`
	Timestamp       metav1.Time       `json:"timestamp"`
	WindowSeconds   *int64            `json:"window,omitempty"`
	Value           resource.Quantity `json:"value"`
}

// ExternalMetricValueList is external.metrics.k8s.io/v1beta1
// ExternalMetricValueList.
type ExternalMetricValueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExternalMetricValue `json:"items"`
}
