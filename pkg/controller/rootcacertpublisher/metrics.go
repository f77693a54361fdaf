package rootcacertpublisher

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kcm-dev/kcm/internal/controller"
)

// Upstream's metrics (help texts included, the histogram's as upstream
// wrote it), served on /metrics from the legacy registry.
const metricsSubsystem = "root_ca_cert_publisher"

var (
	syncTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "sync_total",
		Help:           "Number of namespace syncs happened in root ca cert publisher.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "sync_duration_seconds",
		Help:           "Number of namespace syncs happened in root ca cert publisher.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(syncTotal, syncDuration)
	})
}

// recordSync counts one namespace sync under upstream's code label: 200
// for success, the API status code of a failed request, else 500.
func recordSync(start time.Time, err error) {
	code := controller.StatusCode(err)
	syncDuration.WithLabelValues(code).Observe(time.Since(start).Seconds())
	syncTotal.WithLabelValues(code).Inc()
}
