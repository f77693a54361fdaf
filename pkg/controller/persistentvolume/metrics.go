package persistentvolume

import (
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"k8s.io/utils/ptr"
)

// The persistentvolume-binder's metrics, with upstream's names, help
// strings, labels and stability levels:
//
//   - pv_collector_* gauges, computed at scrape time from the controller's
//     own view of volumes and claims;
//   - volume_operation_errors_total (and its deprecated twin
//     volume_operation_total_errors) for failed provisioning and deletion;
//   - volume_operation_total_seconds, the time from the start of a
//     provisioning to the claim's binding, or from the start of a deletion
//     to the volume's disappearance;
//   - storage_operation_duration_seconds around the in-tree plugin's own
//     provision and delete calls (here only the hostPath plugin's);
//   - retroactive_storageclass_total and retroactive_storageclass_errors_total
//     for the default StorageClass given to claims created without one.
//
// Upstream's binder also registers csi_operations_seconds along with the
// two histograms but never observes it (CSI calls are made by the kubelet
// and external sidecars), so an empty family is all it would show; it is
// left out.

const (
	pvCollectorSubsystem = "pv_collector"

	// pluginNotAvailable is upstream's plugin_name when no plugin is known.
	pluginNotAvailable = "N/A"

	// operation_name values of volume_operation_errors_total and
	// volume_operation_total_seconds.
	opNameProvision = "provision"
	opNameDelete    = "delete"
	// operation_name values of storage_operation_duration_seconds.
	opNameVolumeProvision = "volume_provision"
	opNameVolumeDelete    = "volume_delete"

	statusSuccess     = storageutil.StatusSuccess
	statusFailUnknown = storageutil.StatusFailUnknown
)

// volumeOperationBuckets are upstream's buckets of both duration histograms.
var volumeOperationBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600}

var (
	totalPVDesc = metrics.NewDesc(metrics.BuildFQName("", pvCollectorSubsystem, "total_pv_count"),
		"Gauge measuring total number of persistent volumes",
		[]string{"plugin_name", "volume_mode"}, nil, metrics.ALPHA, "")
	boundPVDesc = metrics.NewDesc(metrics.BuildFQName("", pvCollectorSubsystem, "bound_pv_count"),
		"Gauge measuring number of persistent volume currently bound",
		[]string{"storage_class"}, nil, metrics.ALPHA, "")
	unboundPVDesc = metrics.NewDesc(metrics.BuildFQName("", pvCollectorSubsystem, "unbound_pv_count"),
		"Gauge measuring number of persistent volume currently unbound",
		[]string{"storage_class"}, nil, metrics.ALPHA, "")
	boundPVCDesc = metrics.NewDesc(metrics.BuildFQName("", pvCollectorSubsystem, "bound_pvc_count"),
		"Gauge measuring number of persistent volume claim currently bound",
		[]string{"namespace", "storage_class", "volume_attributes_class"}, nil, metrics.ALPHA, "")
	unboundPVCDesc = metrics.NewDesc(metrics.BuildFQName("", pvCollectorSubsystem, "unbound_pvc_count"),
		"Gauge measuring number of persistent volume claim currently unbound",
		[]string{"namespace", "storage_class", "volume_attributes_class"}, nil, metrics.ALPHA, "")

	volumeOperationErrors = metrics.NewCounterVec(&metrics.CounterOpts{
		Name:           "volume_operation_errors_total",
		Help:           "Total volume operation errors",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin_name", "operation_name"})
	volumeOperationErrorsDeprecated = metrics.NewCounterVec(&metrics.CounterOpts{
		Name:              "volume_operation_total_errors",
		Help:              "Total volume operation errors",
		StabilityLevel:    metrics.ALPHA,
		DeprecatedVersion: "1.36.0",
	}, []string{"plugin_name", "operation_name"})
	retroactiveStorageClass = metrics.NewCounter(&metrics.CounterOpts{
		Name:           "retroactive_storageclass_total",
		Help:           "Total number of retroactive StorageClass assignments to persistent volume claim",
		StabilityLevel: metrics.ALPHA,
	})
	retroactiveStorageClassErrors = metrics.NewCounter(&metrics.CounterOpts{
		Name:           "retroactive_storageclass_errors_total",
		Help:           "Total number of failed retroactive StorageClass assignments to persistent volume claim",
		StabilityLevel: metrics.ALPHA,
	})
	volumeOperationSeconds = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Name:           "volume_operation_total_seconds",
		Help:           "Storage operation end to end duration in seconds",
		Buckets:        volumeOperationBuckets,
		StabilityLevel: metrics.BETA,
	}, []string{"plugin_name", "operation_name"})
)

var (
	countCollector  = &pvCountCollector{}
	registerMetrics sync.Once
)

// registerBinderMetrics points the collector at c (the controller built
// last: one per process outside tests) and registers everything once.
// Upstream registers from Run, once its caches are filled; before that
// this collector reads an empty view, which shows the same nothing.
func registerBinderMetrics(c *Controller) {
	countCollector.c.Store(c)
	registerMetrics.Do(func() {
		legacyregistry.CustomMustRegister(countCollector)
		legacyregistry.MustRegister(volumeOperationErrors, volumeOperationErrorsDeprecated,
			retroactiveStorageClass, retroactiveStorageClassErrors,
			volumeOperationSeconds)
		storageutil.RegisterOperationMetrics()
	})
}

// pvCountCollector exposes the pv_collector_* gauges.
type pvCountCollector struct {
	metrics.BaseStableCollector
	c atomic.Pointer[Controller]
}

var _ metrics.StableCollector = (*pvCountCollector)(nil)

func (p *pvCountCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range []*metrics.Desc{totalPVDesc, boundPVDesc, unboundPVDesc, boundPVCDesc, unboundPVCDesc} {
		ch <- d
	}
}

type pluginAndMode struct{ plugin, mode string }

type claimLabels struct{ namespace, class, vac string }

func (p *pvCountCollector) CollectWithStability(ch chan<- metrics.Metric) {
	c := p.c.Load()
	if c == nil {
		return
	}
	total := map[pluginAndMode]int{}
	boundPV, unboundPV := map[string]int{}, map[string]int{}
	for _, obj := range c.volumes.store.List() {
		pv, ok := obj.(*v1.PersistentVolume)
		if !ok {
			continue
		}
		mode := v1.PersistentVolumeFilesystem
		if pv.Spec.VolumeMode != nil {
			mode = *pv.Spec.VolumeMode
		}
		total[pluginAndMode{volumePluginName(pv), string(mode)}]++
		if pv.Status.Phase == v1.VolumeBound {
			boundPV[pv.Spec.StorageClassName]++
		} else {
			unboundPV[pv.Spec.StorageClassName]++
		}
	}
	boundPVC, unboundPVC := map[claimLabels]int{}, map[claimLabels]int{}
	for _, obj := range c.claims.List() {
		claim, ok := obj.(*v1.PersistentVolumeClaim)
		if !ok {
			continue
		}
		l := claimLabels{claim.Namespace, storagehelpers.GetPersistentVolumeClaimClass(claim), ptr.Deref(claim.Spec.VolumeAttributesClassName, "")}
		if claim.Status.Phase == v1.ClaimBound {
			boundPVC[l]++
		} else {
			unboundPVC[l]++
		}
	}

	gauge := func(d *metrics.Desc, n int, labels ...string) {
		ch <- metrics.NewLazyConstMetric(d, metrics.GaugeValue, float64(n), labels...)
	}
	for k, n := range total {
		gauge(totalPVDesc, n, k.plugin, k.mode)
	}
	for class, n := range boundPV {
		gauge(boundPVDesc, n, class)
	}
	for class, n := range unboundPV {
		gauge(unboundPVDesc, n, class)
	}
	for k, n := range boundPVC {
		gauge(boundPVCDesc, n, k.namespace, k.class, k.vac)
	}
	for k, n := range unboundPVC {
		gauge(unboundPVCDesc, n, k.namespace, k.class, k.vac)
	}
}

// volumePluginName is the plugin_name upstream's collector gives a volume:
// the one plugin of the binder's VolumePluginMgr whose CanSupport accepts
// it (FindPluginBySpec), qualified by GetFullQualifiedPluginNameForVolume,
// and "N/A" when none does. The binder's plugins are those that
// kube-controller-manager's ProbeProvisionableRecyclableVolumePlugins
// keeps: provisionable, deletable or recyclable ones, i.e. hostPath and
// NFS. The CSI plugin (like FC and iSCSI) is none of the three and is
// filtered out, so the ":<driver>" qualification is never reached and CSI
// volumes are "N/A" too.
func volumePluginName(pv *v1.PersistentVolume) string {
	switch {
	case pv.Spec.HostPath != nil:
		return hostPathPluginName
	case pv.Spec.NFS != nil:
		return nfsPluginName
	}
	return pluginNotAvailable
}

func recordRetroactiveStorageClass(err error) {
	retroactiveStorageClass.Inc()
	if err != nil {
		retroactiveStorageClassErrors.Inc()
	}
}

func recordOperationError(plugin, op string) {
	if plugin == "" {
		plugin = pluginNotAvailable
	}
	volumeOperationErrors.WithLabelValues(plugin, op).Inc()
	volumeOperationErrorsDeprecated.WithLabelValues(plugin, op).Inc()
}

// observeStorageOperation records one call of an in-tree plugin's
// provisioner or deleter (upstream's OperationCompleteHook).
func observeStorageOperation(plugin, op string, start time.Time, err error) {
	storageutil.ObserveOperation(plugin, op, start, time.Now(), err)
}

// operationTimes remembers when a provisioning (keyed by claim key) or a
// deletion (keyed by volume name) started, for volume_operation_total_seconds.
// A failure counts an error and keeps the start; the end of the whole
// operation (the claim bound, the volume gone) observes the duration and
// forgets it.
type operationTimes struct {
	mu      sync.Mutex
	started map[string]operationStart
}

type operationStart struct {
	plugin, op string
	at         time.Time
}

func newOperationTimes() *operationTimes {
	return &operationTimes{started: map[string]operationStart{}}
}

// start remembers key's start unless it is already remembered.
func (t *operationTimes) start(key, plugin, op string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.started[key]; !ok {
		t.started[key] = operationStart{plugin: plugin, op: op, at: time.Now()}
	}
}

// failed counts an error of key's operation, if one was started.
func (t *operationTimes) failed(key string) {
	t.mu.Lock()
	s, ok := t.started[key]
	t.mu.Unlock()
	if ok {
		recordOperationError(s.plugin, s.op)
	}
}

// done observes the duration of key's operation, if one was started, and
// forgets it.
func (t *operationTimes) done(key string) {
	t.mu.Lock()
	s, ok := t.started[key]
	delete(t.started, key)
	t.mu.Unlock()
	if ok {
		volumeOperationSeconds.WithLabelValues(s.plugin, s.op).Observe(time.Since(s.at).Seconds())
	}
}

// forget drops key's start without observing it (its claim was deleted).
func (t *operationTimes) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.started, key)
}

// provisionerName is the plugin_name of a provisioning, upstream's rule:
// the in-tree plugin's name, or the CSI driver an in-tree provisioner is
// migrated to, or the class's provisioner.
func provisionerName(internal bool, class *storagev1.StorageClass) string {
	if internal {
		return hostPathPluginName
	}
	if driver, migrated := migratedPlugins[class.Provisioner]; migrated {
		return driver
	}
	return class.Provisioner
}

// deleterName is the plugin_name of a deletion, upstream's rule: the
// in-tree deleter's name; for an external deleter the provisioner of the
// volume's class (not its provisioned-by annotation, to keep the label's
// values few), migrated to its CSI driver; "N/A" when nobody can delete
// the volume or its class is unknown.
func (c *Controller) deleterName(pv *v1.PersistentVolume) string {
	hostPath, err := findDeleter(pv)
	switch {
	case err != nil:
		return pluginNotAvailable
	case hostPath:
		return hostPathPluginName
	}
	class, err := c.classLister.Get(storagehelpers.GetPersistentVolumeClass(pv))
	if err != nil {
		return pluginNotAvailable
	}
	return provisionerName(false, class)
}
