package storageutil

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// OperationSeconds is upstream's storage_operation_duration_seconds, which
// the volume controllers share: the persistentvolume-binder observes its
// in-tree plugin's provision and delete calls, the attach-detach
// controller its attaches and detaches (from the start of the operation to
// its end: the volume attached or detached, or the failure).
var OperationSeconds = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Name:           "storage_operation_duration_seconds",
	Help:           "Storage operation duration",
	Buckets:        []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600},
	StabilityLevel: metrics.BETA,
}, []string{"volume_plugin", "operation_name", "status", "migrated"})

// Upstream's status label values.
const (
	StatusSuccess     = "success"
	StatusFailUnknown = "fail-unknown"
)

var registerOperation sync.Once

// RegisterOperationMetrics registers OperationSeconds once per process.
func RegisterOperationMetrics() {
	registerOperation.Do(func() { legacyregistry.MustRegister(OperationSeconds) })
}

// ObserveOperation records one operation of plugin (upstream's full
// plugin name) that started at start and ended now, failed if err is set;
// kcm migrates no volume, so migrated is always false.
func ObserveOperation(plugin, op string, start, now time.Time, err error) {
	status := StatusSuccess
	if err != nil {
		status = StatusFailUnknown
	}
	OperationSeconds.WithLabelValues(plugin, op, status, strconv.FormatBool(false)).Observe(now.Sub(start).Seconds())
}
