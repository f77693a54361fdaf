package resourceclaim

import (
	"strings"
	"sync"
	"sync/atomic"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	resourceclaimmetrics "k8s.io/dynamic-resource-allocation/resourceclaim/metrics"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// claimsDesc is upstream's dynamic_resource_allocation_resource_claims
// gauge, computed from the informer's cache at each scrape.
var claimsDesc = metrics.NewDesc(
	metrics.BuildFQName("", "dynamic_resource_allocation", "resource_claims"),
	"Number of ResourceClaims, categorized by allocation status, admin access, and source. "+
		"Source can be 'resource_claim_template' (created from a template), "+
		"'extended_resource' (extended resources), or empty (manually created by a user).",
	[]string{"allocated", "admin_access", "source"}, nil,
	metrics.ALPHA, "")

var (
	collector    = &claimCollector{}
	registerOnce sync.Once
)

// registerMetrics points the collector at the lister of the controller
// built last (one per process outside tests) and registers both families
// once.
func registerMetrics(claims resourcelisters.ResourceClaimLister) {
	collector.claims.Store(&claims)
	registerOnce.Do(func() {
		resourceclaimmetrics.RegisterMetrics()
		legacyregistry.CustomMustRegister(collector)
	})
}

type claimCollector struct {
	metrics.BaseStableCollector
	claims atomic.Pointer[resourcelisters.ResourceClaimLister]
}

func (c *claimCollector) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- claimsDesc }

func (c *claimCollector) CollectWithStability(ch chan<- metrics.Metric) {
	lister := c.claims.Load()
	if lister == nil {
		return
	}
	claims, err := (*lister).List(labels.Everything())
	if err != nil {
		klog.Background().Error(err, "Failed to list ResourceClaims for metrics")
		return
	}
	type key struct{ allocated, admin, source string }
	counts := map[key]int{}
	for _, claim := range claims {
		k := key{allocated: "false", admin: adminAccess(claim), source: claimSource(claim)}
		if claim.Status.Allocation != nil {
			k.allocated = "true"
		}
		counts[k]++
	}
	for k, n := range counts {
		ch <- metrics.NewLazyConstMetric(claimsDesc, metrics.GaugeValue, float64(n), k.allocated, k.admin, k.source)
	}
}

func claimSource(claim *resourceapi.ResourceClaim) string {
	switch {
	case claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] == "true":
		return "extended_resource"
	case claim.Annotations[resourceapi.PodResourceClaimAnnotation] != "":
		return "resource_claim_template"
	}
	return ""
}

func adminAccess(claim *resourceapi.ResourceClaim) string {
	for _, r := range claim.Spec.Devices.Requests {
		if r.Exactly != nil && ptr.Deref(r.Exactly.AdminAccess, false) {
			return "true"
		}
	}
	return "false"
}

// createLabels returns the label values of resourceclaim_creates_total
// for claim and a status ("success" or "failure").
func createLabels(claim *resourceapi.ResourceClaim) func(status string) []string {
	group, kind := "", ""
	if o := metav1.GetControllerOfNoCopy(claim); o != nil {
		kind = o.Kind
		if g, _, found := strings.Cut(o.APIVersion, "/"); found {
			group = g
		}
	}
	admin := adminAccess(claim)
	return func(status string) []string { return []string{status, admin, group, kind} }
}
