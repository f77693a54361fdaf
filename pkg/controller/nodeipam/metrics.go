package nodeipam

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's cidrset metrics (names, help and the "cirdset" typo included),
// served on /metrics, labelled by cluster CIDR.
const metricsSubsystem = "node_ipam_controller"

var (
	cidrSetAllocations = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "cidrset_cidrs_allocations_total",
		Help:           "Counter measuring total number of CIDR allocations.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"clusterCIDR"})
	cidrSetReleases = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "cidrset_cidrs_releases_total",
		Help:           "Counter measuring total number of CIDR releases.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"clusterCIDR"})
	cidrSetMaxCIDRs = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "cirdset_max_cidrs",
		Help:           "Maximum number of CIDRs that can be allocated.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"clusterCIDR"})
	cidrSetUsage = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "cidrset_usage_cidrs",
		Help:           "Gauge measuring percentage of allocated CIDRs.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"clusterCIDR"})
	cidrSetAllocationTries = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "cidrset_allocation_tries_per_request",
		Help:           "Number of endpoints added on each Service sync",
		StabilityLevel: metrics.ALPHA,
		Buckets:        metrics.ExponentialBuckets(1, 5, 5),
	}, []string{"clusterCIDR"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(cidrSetAllocations, cidrSetReleases, cidrSetMaxCIDRs, cidrSetUsage, cidrSetAllocationTries)
	})
}
