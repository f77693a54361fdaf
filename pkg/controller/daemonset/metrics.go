package daemonset

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metric, served on /metrics.
var (
	staleSyncSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "daemonset_controller",
		Name:           "stale_sync_skips_total",
		Help:           "Total number of DaemonSet syncs skipped due to a stale watch cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "resource"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(staleSyncSkips) })
}
