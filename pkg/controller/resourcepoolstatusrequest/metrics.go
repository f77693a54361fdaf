package resourcepoolstatusrequest

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// metricsSubsystem is upstream's subsystem of the controller's metrics.
const metricsSubsystem = "resourcepoolstatusrequest_controller"

// Upstream's metrics, by driver: requests answered (or whose answer failed
// to be written), failed status writes, and the time from a sync's start to
// its status write.
var (
	requestsProcessed = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "requests_processed_total",
		Help:           "Total number of ResourcePoolStatusRequests processed",
		StabilityLevel: metrics.ALPHA,
	}, []string{"driver_name"})
	requestErrors = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "request_processing_errors_total",
		Help:           "Total number of errors encountered while processing ResourcePoolStatusRequests",
		StabilityLevel: metrics.ALPHA,
	}, []string{"driver_name"})
	requestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "request_processing_duration_seconds",
		Help:           "Time taken to process a ResourcePoolStatusRequest",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"driver_name"})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(requestsProcessed, requestErrors, requestDuration)
	})
}
