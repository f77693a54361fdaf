package clustertrustbundlepublisher

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kcm-dev/kcm/internal/controller"
)

// Upstream's metrics, served on /metrics.
var (
	syncTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "clustertrustbundle_publisher",
		Name:           "sync_total",
		Help:           "Number of syncs that occurred in cluster trust bundle publisher.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "clustertrustbundle_publisher",
		Name:           "sync_duration_seconds",
		Help:           "The time it took to sync a cluster trust bundle.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(syncTotal)
		legacyregistry.MustRegister(syncDuration)
	})
}

// recordSync counts a sync by the HTTP status code of its error (200 for
// none, 500 for one without a status).
func recordSync(start time.Time, err error) {
	code := controller.StatusCode(err)
	syncDuration.WithLabelValues(code).Observe(time.Since(start).Seconds())
	syncTotal.WithLabelValues(code).Inc()
}
