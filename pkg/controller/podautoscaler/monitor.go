package podautoscaler

import (
	"errors"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kcm-dev/kcm/internal/controller/expectations"
)

// Upstream's metrics, served on /metrics.
const metricsSubsystem = "horizontal_pod_autoscaler_controller"

// Label values of the action and error labels.
const (
	actionScaleUp   = "scale_up"
	actionScaleDown = "scale_down"
	actionNone      = "none"
	errorSpec       = "spec"
	errorInternal   = "internal"
	errorNone       = "none"
)

type staleError = expectations.StaleCacheError

const labelsHelp = "The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'."

var (
	reconciliationsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem, Name: "reconciliations_total",
		Help:           "Number of reconciliations of HPA controller. " + labelsHelp + " Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label.",
		StabilityLevel: metrics.BETA,
	}, []string{"action", "error"})
	reconciliationDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: metricsSubsystem, Name: "reconciliation_duration_seconds",
		Help:           "The time(seconds) that the HPA controller takes to reconcile once. " + labelsHelp + " Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.BETA,
	}, []string{"action", "error"})
	metricComputationTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem, Name: "metric_computation_total",
		Help:           "Number of metric computations. " + labelsHelp + " The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
		StabilityLevel: metrics.BETA,
	}, []string{"action", "error", "metric_type"})
	metricComputationDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: metricsSubsystem, Name: "metric_computation_duration_seconds",
		Help:           "The time(seconds) that the HPA controller takes to calculate one metric. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. The label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.BETA,
	}, []string{"action", "error", "metric_type"})
	numHPAs = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: metricsSubsystem, Name: "num_horizontal_pod_autoscalers",
		Help:           "Current number of controlled HPA objects.",
		StabilityLevel: metrics.ALPHA,
	})
	desiredReplicasGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: metricsSubsystem, Name: "desired_replicas",
		Help:           "Current desired replica count for HPA objects.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "hpa_name"})
	staleSyncSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: metricsSubsystem, Name: "stale_sync_skips_total",
		Help:           "Total number of HPA syncs skipped due to a stale watch cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "resource"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(reconciliationsTotal, reconciliationDuration, metricComputationTotal,
			metricComputationDuration, numHPAs, desiredReplicasGauge, staleSyncSkips)
	})
}

func errorLabel(err error) string {
	switch {
	case err == nil:
		return errorNone
	case errors.Is(err, errSpec):
		return errorSpec
	}
	return errorInternal
}

func observeReconciliation(action string, err error, d time.Duration) {
	reconciliationsTotal.WithLabelValues(action, errorLabel(err)).Inc()
	reconciliationDuration.WithLabelValues(action, errorLabel(err)).Observe(d.Seconds())
}

// observeMetricComputation labels one metric's proposal against the
// HPA's current replica count in its status.
func observeMetricComputation(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.MetricSourceType, proposed int32, err error, d time.Duration) {
	action := actionNone
	switch {
	case err != nil:
	case proposed > hpa.Status.CurrentReplicas:
		action = actionScaleUp
	case proposed < hpa.Status.CurrentReplicas:
		action = actionScaleDown
	}
	metricComputationTotal.WithLabelValues(action, errorLabel(err), string(t)).Inc()
	metricComputationDuration.WithLabelValues(action, errorLabel(err), string(t)).Observe(d.Seconds())
}

func observeHPAAdded()   { numHPAs.Inc() }
func observeHPADeleted() { numHPAs.Dec() }

func observeDesiredReplicas(namespace, name string, replicas int32) {
	desiredReplicasGauge.WithLabelValues(namespace, name).Set(float64(replicas))
}

func observeStaleSkip(gr schema.GroupResource) {
	staleSyncSkips.WithLabelValues(gr.Group, gr.Resource).Inc()
}
