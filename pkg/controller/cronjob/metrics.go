package cronjob

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metric, served on /metrics.
var (
	jobCreationSkew = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "cronjob_controller",
		Name:           "job_creation_skew_duration_seconds",
		Help:           "Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
		StabilityLevel: metrics.STABLE,
		Buckets:        metrics.ExponentialBuckets(1, 2, 10),
	})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(jobCreationSkew) })
}
