package nodelifecycle

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics, served on /metrics.
const metricsSubsystem = "node_collector"

var (
	zoneHealth = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "zone_health",
		Help:           "Gauge measuring percentage of healthy nodes per zone.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"zone"})
	zoneSize = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "zone_size",
		Help:           "Gauge measuring number of registered Nodes per zones.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"zone"})
	unhealthyNodes = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "unhealthy_nodes_in_zone",
		Help:           "Gauge measuring number of not Ready Nodes per zones.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"zone"})
	evictionsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "evictions_total",
		Help:           "Number of Node evictions that happened since current instance of NodeController started.",
		StabilityLevel: metrics.STABLE,
	}, []string{"zone"})
	updateNodeHealthDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "update_node_health_duration_seconds",
		Help:           "Duration in seconds for NodeController to update the health of a single node.",
		Buckets:        metrics.ExponentialBuckets(0.001, 4, 8),
		StabilityLevel: metrics.ALPHA,
	})
	updateAllNodesHealthDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "update_all_nodes_health_duration_seconds",
		Help:           "Duration in seconds for NodeController to update the health of all nodes.",
		Buckets:        metrics.ExponentialBuckets(0.01, 4, 8),
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(zoneHealth, zoneSize, unhealthyNodes, evictionsTotal,
			updateNodeHealthDuration, updateAllNodesHealthDuration)
	})
}

// observeZone publishes a zone's size and health.
func observeZone(key string, size, notReady int) {
	zoneSize.WithLabelValues(key).Set(float64(size))
	zoneHealth.WithLabelValues(key).Set(float64(100*(size-notReady)) / float64(size))
	unhealthyNodes.WithLabelValues(key).Set(float64(notReady))
}

// forgetZone publishes an empty, healthy zone for one that has no nodes
// left, as upstream.
func forgetZone(key string) {
	zoneSize.WithLabelValues(key).Set(0)
	zoneHealth.WithLabelValues(key).Set(100)
	unhealthyNodes.WithLabelValues(key).Set(0)
}
