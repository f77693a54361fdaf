package replicaset

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// Upstream's metrics, served on /metrics. As upstream, the
// replicaset-controller registers them; the replicationcontroller-controller
// only feeds them (observations are dropped until registration).
const metricsSubsystem = "replicaset_controller"

var (
	sortingDeletionAgeRatio = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem: metricsSubsystem,
		Name:      "sorting_deletion_age_ratio",
		Help: "The ratio of chosen deleted pod's ages to the current youngest pod's age (at the time). Should be <2. " +
			"The intent of this metric is to measure the rough efficacy of the sorting (and deletion) of pods when " +
			"a replicaset scales down. This only considers Ready pods when calculating and reporting.",
		Buckets:        metrics.ExponentialBuckets(0.25, 2, 6),
		StabilityLevel: metrics.ALPHA,
	})
	staleSyncSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "stale_sync_skips_total",
		Help:           "Total number of ReplicaSet syncs skipped due to a stale watch cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "resource"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(sortingDeletionAgeRatio, staleSyncSkips)
	})
}

// observeDeletionAgeRatios reports, for each ready victim, its age divided
// by the age of the youngest ready pod (in whole milliseconds, as
// upstream computes it).
func observeDeletionAgeRatios(pods, victims []*v1.Pod, now time.Time) {
	var youngest time.Time
	for _, p := range pods {
		if podranking.IsReady(p) && p.CreationTimestamp.After(youngest) {
			youngest = p.CreationTimestamp.Time
		}
	}
	youngestAge := now.Sub(youngest).Milliseconds()
	if youngestAge == 0 {
		return
	}
	for _, p := range victims {
		if podranking.IsReady(p) {
			sortingDeletionAgeRatio.Observe(float64(now.Sub(p.CreationTimestamp.Time).Milliseconds() / youngestAge))
		}
	}
}
