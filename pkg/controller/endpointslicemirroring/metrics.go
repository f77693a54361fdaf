package endpointslicemirroring

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics, served on /metrics.
const metricsSubsystem = "endpoint_slice_mirroring_controller"

func perSyncHistogram(name, help string, buckets []float64) *metrics.HistogramVec {
	return metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           name,
		Help:           help,
		StabilityLevel: metrics.ALPHA,
		Buckets:        buckets,
	}, []string{})
}

func gauge(name, help string) *metrics.GaugeVec {
	return metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           name,
		Help:           help,
		StabilityLevel: metrics.ALPHA,
	}, []string{})
}

var (
	endpointsAdded   = perSyncHistogram("endpoints_added_per_sync", "Number of endpoints added on each Endpoints sync", metrics.ExponentialBuckets(2, 2, 15))
	endpointsUpdated = perSyncHistogram("endpoints_updated_per_sync", "Number of endpoints updated on each Endpoints sync", metrics.ExponentialBuckets(2, 2, 15))
	endpointsRemoved = perSyncHistogram("endpoints_removed_per_sync", "Number of endpoints removed on each Endpoints sync", metrics.ExponentialBuckets(2, 2, 15))
	addressesSkipped = perSyncHistogram("addresses_skipped_per_sync",
		"Number of addresses skipped on each Endpoints sync due to being invalid or exceeding MaxEndpointsPerSubset", metrics.ExponentialBuckets(2, 2, 15))
	syncDuration     = perSyncHistogram("endpoints_sync_duration", "Duration of syncEndpoints() in seconds", metrics.ExponentialBuckets(0.001, 2, 15))
	endpointsDesired = gauge("endpoints_desired", "Number of endpoints desired")
	numSlices        = gauge("num_endpoint_slices", "Number of EndpointSlices")
	desiredSlices    = gauge("desired_endpoint_slices", "Number of EndpointSlices that would exist with perfect endpoint allocation")
	sliceChanges     = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "changes",
		Help:           "Number of EndpointSlice changes",
		StabilityLevel: metrics.ALPHA,
	}, []string{"operation"})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(endpointsAdded, endpointsUpdated, endpointsRemoved, addressesSkipped,
			syncDuration, endpointsDesired, numSlices, desiredSlices, sliceChanges)
	})
}

// efficiency is what one Endpoints object contributes to the gauges.
type efficiency struct {
	endpoints, slices, desiredSlices int
}

// metricsCache keeps each mirrored Endpoints' contribution to the gauges,
// so that they can be updated as one Endpoints changes or goes.
type metricsCache struct {
	mu     sync.Mutex
	byName map[types.NamespacedName]efficiency
	total  efficiency
}

func newMetricsCache() *metricsCache {
	return &metricsCache{byName: map[types.NamespacedName]efficiency{}}
}

func (m *metricsCache) update(nn types.NamespacedName, e efficiency) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total = m.total.minus(m.byName[nn]).plus(e)
	m.byName[nn] = e
	m.publish()
}

func (m *metricsCache) deleteEndpoints(nn types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byName[nn]; ok {
		m.total = m.total.minus(e)
		delete(m.byName, nn)
		m.publish()
	}
}

func (m *metricsCache) publish() {
	endpointsDesired.WithLabelValues().Set(float64(m.total.endpoints))
	numSlices.WithLabelValues().Set(float64(m.total.slices))
	desiredSlices.WithLabelValues().Set(float64(m.total.desiredSlices))
}

func (e efficiency) plus(o efficiency) efficiency {
	return efficiency{e.endpoints + o.endpoints, e.slices + o.slices, e.desiredSlices + o.desiredSlices}
}

func (e efficiency) minus(o efficiency) efficiency {
	return efficiency{e.endpoints - o.endpoints, e.slices - o.slices, e.desiredSlices - o.desiredSlices}
}
