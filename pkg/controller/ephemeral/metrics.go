package ephemeral

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics, served on /metrics.
var (
	createAttempts = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "ephemeral_volume_controller",
		Name:           "create_total",
		Help:           "Number of PersistentVolumeClaim creation requests",
		StabilityLevel: metrics.ALPHA,
	})
	createFailures = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "ephemeral_volume_controller",
		Name:           "create_failures_total",
		Help:           "Number of PersistentVolumeClaim creation requests",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(createAttempts)
		legacyregistry.MustRegister(createFailures)
	})
}
