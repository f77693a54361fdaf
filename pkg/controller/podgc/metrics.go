package podgc

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metrics, served on /metrics.
const metricsSubsystem = "pod_gc_collector"

// Values of the "reason" label.
const (
	reasonTerminated              = "terminated"
	reasonTerminatingOutOfService = "out-of-service"
	reasonOrphaned                = "orphaned"
	reasonTerminatingUnscheduled  = "unscheduled"
)

var (
	deletingPodsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "force_delete_pods_total",
		Help:           "Number of pods that are being forcefully deleted since the Pod GC Controller started.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "reason"})
	deletingPodsErrorTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "force_delete_pod_errors_total",
		Help:           "Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "reason"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(deletingPodsTotal, deletingPodsErrorTotal)
	})
}
