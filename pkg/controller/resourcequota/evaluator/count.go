package evaluator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

// LegacyCountNames are the object-count names quota accepted before
// count/<resource>, still measured beside them.
var LegacyCountNames = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
}

// CountFunc counts the objects of a namespace.
type CountFunc func(namespace string) (int, error)

// objectCount measures count/<resource>.<group> (and a legacy alias) by
// counting the namespace's objects. It matches no scope: under a quota
// with scopes or scope selector requirements it counts nothing, as
// upstream's generic object count evaluator.
type objectCount struct {
	gr    schema.GroupResource
	names []corev1.ResourceName
	count CountFunc
}

// NewObjectCount returns the object count evaluator of gr; gr's legacy
// name, if it has one, is measured too.
func NewObjectCount(gr schema.GroupResource, count CountFunc) Evaluator {
	names := []corev1.ResourceName{generic.ObjectCountQuotaResourceNameFor(gr)}
	if alias, ok := LegacyCountNames[gr]; ok {
		names = append(names, alias)
	}
	return &objectCount{gr: gr, names: names, count: count}
}

func (o *objectCount) GroupResource() schema.GroupResource { return o.gr }

func (o *objectCount) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, o.names)
}

// UsageStats is generic.CalculateUsageStats for an evaluator whose every
// object counts 1 under each of its names, without building a list per
// object.
func (o *objectCount) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	result := quota.UsageStats{Used: corev1.ResourceList{}}
	for _, name := range options.Resources {
		result.Used[name] = resource.Quantity{Format: resource.DecimalSI}
	}
	n, err := o.count(options.Namespace)
	if err != nil {
		return result, fmt.Errorf("failed to list content: %w", err)
	}
	if n == 0 || len(options.Scopes) > 0 ||
		(options.ScopeSelector != nil && len(options.ScopeSelector.MatchExpressions) > 0) {
		return result, nil
	}
	for _, name := range o.names {
		result.Used[name] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	}
	return result, nil
}
