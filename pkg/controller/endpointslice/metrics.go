package endpointslice

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics (k8s.io/endpointslice/metrics), served on /metrics.
const metricsSubsystem = "endpoint_slice_controller"

var (
	endpointsAddedPerSync = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "endpoints_added_per_sync",
		Help:           "Number of endpoints added on each Service sync",
		StabilityLevel: metrics.BETA,
		Buckets:        metrics.ExponentialBuckets(2, 2, 15),
	}, []string{})
	endpointsRemovedPerSync = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "endpoints_removed_per_sync",
		Help:           "Number of endpoints removed on each Service sync",
		StabilityLevel: metrics.BETA,
		Buckets:        metrics.ExponentialBuckets(2, 2, 15),
	}, []string{})
	endpointsDesired = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "endpoints_desired",
		Help:           "Number of endpoints desired",
		StabilityLevel: metrics.BETA,
	}, []string{})
	numEndpointSlices = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "num_endpoint_slices",
		Help:           "Number of EndpointSlices",
		StabilityLevel: metrics.BETA,
	}, []string{})
	desiredEndpointSlices = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "desired_endpoint_slices",
		Help:           "Number of EndpointSlices that would exist with perfect endpoint allocation",
		StabilityLevel: metrics.BETA,
	}, []string{})
	sliceChanges = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "changes",
		Help:           "Number of EndpointSlice changes",
		StabilityLevel: metrics.ALPHA,
	}, []string{"operation"})
	slicesChangedPerSync = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: metricsSubsystem,
		Name:      "endpointslices_changed_per_sync",
		Help:      "Number of EndpointSlices changed on each Service sync",
	}, []string{"topology", "traffic_distribution"})
	syncs = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "syncs",
		Help:           "Number of EndpointSlice syncs",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	servicesByTrafficDistribution = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "services_count_by_traffic_distribution",
		Help:           "Number of Services using some specific trafficDistribution",
		StabilityLevel: metrics.BETA,
	}, []string{"traffic_distribution"})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(endpointsAddedPerSync, endpointsRemovedPerSync, endpointsDesired,
			numEndpointSlices, desiredEndpointSlices, sliceChanges, slicesChangedPerSync, syncs,
			servicesByTrafficDistribution)
	})
}

// efficiency is one port group's endpoints and slices.
type efficiency struct{ endpoints, slices int }

// servicePortMetrics is a Service's efficiency per port group.
type servicePortMetrics map[string]efficiency

func (m servicePortMetrics) totals(maxPerSlice int) (actual, desired, endpoints int) {
	for _, e := range m {
		endpoints += e.endpoints
		actual += e.slices
		if e.endpoints > 0 {
			desired += (e.endpoints + maxPerSlice - 1) / maxPerSlice
		}
	}
	return actual, max(desired, 1), endpoints
}

// metricsCache keeps the per-Service figures behind the gauges.
type metricsCache struct {
	maxPerSlice int

	mu                         sync.Mutex
	endpoints, actual, desired int
	services                   map[types.NamespacedName]servicePortMetrics
	byTraffic                  map[string]map[types.NamespacedName]bool
}

func newMetricsCache(maxPerSlice int32) *metricsCache {
	return &metricsCache{
		maxPerSlice: int(maxPerSlice),
		services:    map[types.NamespacedName]servicePortMetrics{},
		byTraffic:   map[string]map[types.NamespacedName]bool{},
	}
}

func (c *metricsCache) updateService(nn types.NamespacedName, m servicePortMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(nn)
	c.services[nn] = m
	a, d, e := m.totals(c.maxPerSlice)
	c.actual, c.desired, c.endpoints = c.actual+a, c.desired+d, c.endpoints+e
	c.publish()
}

func (c *metricsCache) updateTrafficDistribution(nn types.NamespacedName, td *string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, set := range c.byTraffic {
		delete(set, nn)
	}
	if td != nil {
		if c.byTraffic[*td] == nil {
			c.byTraffic[*td] = map[types.NamespacedName]bool{}
		}
		c.byTraffic[*td][nn] = true
	}
	c.publish()
}

func (c *metricsCache) deleteService(nn types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, set := range c.byTraffic {
		delete(set, nn)
	}
	if _, ok := c.services[nn]; ok {
		c.drop(nn)
		delete(c.services, nn)
		c.publish()
	}
}

// drop subtracts a Service's figures from the totals.
func (c *metricsCache) drop(nn types.NamespacedName) {
	if old, ok := c.services[nn]; ok {
		a, d, e := old.totals(c.maxPerSlice)
		c.actual, c.desired, c.endpoints = c.actual-a, c.desired-d, c.endpoints-e
	}
}

func (c *metricsCache) publish() {
	numEndpointSlices.WithLabelValues().Set(float64(c.actual))
	desiredEndpointSlices.WithLabelValues().Set(float64(c.desired))
	endpointsDesired.WithLabelValues().Set(float64(c.endpoints))
	servicesByTrafficDistribution.Reset()
	for td, set := range c.byTraffic {
		servicesByTrafficDistribution.WithLabelValues(td).Set(float64(len(set)))
	}
}
