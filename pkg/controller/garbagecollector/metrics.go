package garbagecollector

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metric, served on /metrics.
const metricsSubsystem = "garbagecollector_controller"

var (
	// resourcesSyncErrors counts rediscovery rounds that failed: discovery
	// reported no resources, some monitors could not be set up, or the new
	// monitors did not sync within the resync period.
	resourcesSyncErrors = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "resources_sync_error_total",
		Help:           "Number of garbage collector resources sync errors",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(resourcesSyncErrors) })
}
