package statefulset

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics, served on /metrics.
const metricsSubsystem = "statefulset_controller"

var (
	maxUnavailableGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "statefulset_max_unavailable",
		Help:           "Maximum number of unavailable pods allowed during StatefulSet rolling updates",
		StabilityLevel: metrics.ALPHA,
	}, []string{"statefulset_namespace", "statefulset_name", "pod_management_policy"})
	unavailableReplicas = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "statefulset_unavailable_replicas",
		Help:           "Current number of unavailable pods in StatefulSet",
		StabilityLevel: metrics.ALPHA,
	}, []string{"statefulset_namespace", "statefulset_name", "pod_management_policy"})
	staleSyncSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "stale_sync_skips_total",
		Help:           "Total number of StatefulSet syncs skipped due to a stale watch cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "resource"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(maxUnavailableGauge, unavailableReplicas, staleSyncSkips)
	})
}

// forgetMetrics drops the series of a deleted StatefulSet (upstream keeps
// them until the process exits).
func forgetMetrics(namespace, name string) {
	series := map[string]string{"statefulset_namespace": namespace, "statefulset_name": name}
	maxUnavailableGauge.DeletePartialMatch(series)
	unavailableReplicas.DeletePartialMatch(series)
}
