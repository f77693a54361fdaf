package attachdetach

import (
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// The controller's metrics, with upstream's names, help strings, labels and
// stability levels:
//
//   - storage_count_attachable_volumes_in_use{node, volume_plugin}: per
//     node, the volumes of the pods scheduled there (whatever their phase)
//     that an attachable plugin (CSI, FC, iSCSI) supports, counted once per
//     pod volume, computed at scrape time from the listers;
//   - attachdetach_controller_total_volumes{plugin_name, state}: the
//     volumes to attach (state desired_state_of_world: per managed node and
//     volume) and the attached or uncertain ones (actual_state_of_world),
//     from a snapshot each node's sync leaves;
//   - storage_operation_duration_seconds{volume_plugin, operation_name,
//     status, migrated} for volume_attach and volume_detach, from the start
//     of the operation to the volume attached or detached (or the failure),
//     shared with the persistentvolume-binder (internal/controller/storageutil);
//   - attach_detach_controller_attachdetach_controller_forced_detaches{reason}:
//     detaches started without the safe-to-detach check, for "timeout" (the
//     unmount wait expired) or "out-of-service" (the node's taint).
//
// Upstream resolves in-tree volumes through CSI migration; kcm has none
// (see doc.go), so an in-tree awsElasticBlockStore or gcePersistentDisk
// volume, counted upstream under its CSI driver, is not counted here.

const (
	forceDetachReasonTimeout      = "timeout"
	forceDetachReasonOutOfService = "out-of-service"

	// operation_name values of storage_operation_duration_seconds.
	opNameAttach = "volume_attach"
	opNameDetach = "volume_detach"

	stateDesired = "desired_state_of_world"
	stateActual  = "actual_state_of_world"

	fcPluginName    = "kubernetes.io/fc"
	iscsiPluginName = "kubernetes.io/iscsi"
)

var (
	inUseVolumesDesc = metrics.NewDesc(metrics.BuildFQName("", "storage_count", "attachable_volumes_in_use"),
		"Measure number of volumes in use",
		[]string{"node", "volume_plugin"}, nil, metrics.ALPHA, "")
	totalVolumesDesc = metrics.NewDesc(metrics.BuildFQName("", "attachdetach_controller", "total_volumes"),
		"Number of volumes in A/D Controller",
		[]string{"plugin_name", "state"}, nil, metrics.ALPHA, "")

	forcedDetaches = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "attach_detach_controller",
		Name:           "attachdetach_controller_forced_detaches",
		Help:           "Number of times the A/D Controller performed a forced detach",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
)

var (
	stateCollector  = &volumesCollector{}
	registerMetrics sync.Once
)

// registerControllerMetrics points the collector at c (the controller built
// last: one per process outside tests) and registers everything once.
func registerControllerMetrics(c *Controller) {
	stateCollector.c.Store(c)
	registerMetrics.Do(func() {
		legacyregistry.CustomMustRegister(stateCollector)
		legacyregistry.MustRegister(forcedDetaches)
		storageutil.RegisterOperationMetrics()
	})
}

// observe records an attach or detach of a that started at start and
// ended now (upstream's OperationCompleteHook).
func (s *nodeSync) observe(a *attachment, op string, start time.Time, err error) {
	storageutil.ObserveOperation(csiPluginName+":"+a.driver, op, start, s.now, err)
}

// volumesCollector exposes the two gauges.
type volumesCollector struct {
	metrics.BaseStableCollector
	c atomic.Pointer[Controller]
}

var _ metrics.StableCollector = (*volumesCollector)(nil)

func (v *volumesCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- inUseVolumesDesc
	ch <- totalVolumesDesc
}

func (v *volumesCollector) CollectWithStability(ch chan<- metrics.Metric) {
	c := v.c.Load()
	if c == nil {
		return
	}
	type nodePlugin struct{ node, plugin string }
	inUse := map[nodePlugin]int{}
	for _, obj := range c.podIndexer.List() {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			continue
		}
		for i := range pod.Spec.Volumes {
			if plugin := c.attachablePlugin(pod, &pod.Spec.Volumes[i]); plugin != "" {
				inUse[nodePlugin{pod.Spec.NodeName, plugin}]++
			}
		}
	}
	for k, n := range inUse {
		ch <- metrics.NewLazyConstMetric(inUseVolumesDesc, metrics.GaugeValue, float64(n), k.node, k.plugin)
	}
	for state, byPlugin := range c.counts.totals() {
		for plugin, n := range byPlugin {
			ch <- metrics.NewLazyConstMetric(totalVolumesDesc, metrics.GaugeValue, float64(n), plugin, state)
		}
	}
}

// attachablePlugin is the volume_plugin upstream's collector gives a pod
// volume: the full name of the attachable plugin that supports it, or ""
// when none does or the volume cannot be resolved (an unbound claim).
func (c *Controller) attachablePlugin(pod *v1.Pod, vol *v1.Volume) string {
	pv, err := c.claimedVolume(pod, vol)
	switch {
	case err != nil:
		return ""
	case pv == nil:
		if vol.CSI != nil {
			return csiPluginName + ":" + vol.CSI.Driver
		}
		return otherAttachablePlugin(vol.FC != nil, vol.ISCSI != nil)
	case pv.Spec.CSI != nil:
		return csiPluginName + ":" + pv.Spec.CSI.Driver
	}
	return otherAttachablePlugin(pv.Spec.FC != nil, pv.Spec.ISCSI != nil)
}

func otherAttachablePlugin(fc, iscsi bool) string {
	switch {
	case fc:
		return fcPluginName
	case iscsi:
		return iscsiPluginName
	}
	return ""
}

// volumeCounts is what attachdetach_controller_total_volumes reads: per
// node, the wanted and the attached (or uncertain) volumes by plugin name,
// as the node's last sync left them. The worker writes it, scrapes read it.
type volumeCounts struct {
	mu    sync.Mutex
	nodes map[string]map[string]map[string]int // node -> state -> plugin -> count
}

// record replaces node's counts: desired are the volumes to attach there
// (only on a managed node), actual the entries of ns that upstream's actual
// state of the world would hold with a spec (an entry recovered from the
// node's status and not yet wanted again has none, and upstream does not
// count it either).
func (vc *volumeCounts) record(node string, ns *nodeState, desired map[v1.UniqueVolumeName]*wanted) {
	byState := map[string]map[string]int{}
	add := func(state, driver string) {
		if byState[state] == nil {
			byState[state] = map[string]int{}
		}
		byState[state][csiPluginName+":"+driver]++
	}
	for _, w := range desired {
		add(stateDesired, w.driver)
	}
	if ns != nil {
		for _, a := range ns.volumes {
			if a.inASW && !a.foreign && a.specName != "" {
				add(stateActual, a.driver)
			}
		}
	}
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if len(byState) == 0 {
		delete(vc.nodes, node)
		return
	}
	if vc.nodes == nil {
		vc.nodes = map[string]map[string]map[string]int{}
	}
	vc.nodes[node] = byState
}

// totals sums the nodes' counts: state -> plugin -> count.
func (vc *volumeCounts) totals() map[string]map[string]int {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	out := map[string]map[string]int{}
	for _, byState := range vc.nodes {
		for state, byPlugin := range byState {
			if out[state] == nil {
				out[state] = map[string]int{}
			}
			for plugin, n := range byPlugin {
				out[state][plugin] += n
			}
		}
	}
	return out
}
