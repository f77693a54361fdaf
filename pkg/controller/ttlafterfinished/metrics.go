package ttlafterfinished

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's metric, served on /metrics.
var (
	jobDeletionDurationSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "ttl_after_finished_controller",
		Name:           "job_deletion_duration_seconds",
		Help:           "The time it took to delete the job since it became eligible for deletion",
		StabilityLevel: metrics.ALPHA,
		// Start with 100ms with the last bucket being [~27m, Inf).
		Buckets: metrics.ExponentialBuckets(0.1, 2, 14),
	})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(jobDeletionDurationSeconds) })
}
