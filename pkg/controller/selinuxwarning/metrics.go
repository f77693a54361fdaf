package selinuxwarning

import (
	"sync"
	"sync/atomic"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// conflictDesc is upstream's metric: one series of value 1 per current
// conflict, in both directions.
var conflictDesc = metrics.NewDesc(
	metrics.BuildFQName("", "selinux_warning_controller", "selinux_volume_conflict"),
	"Conflict between two Pods using the same volume",
	[]string{"property", "pod1_namespace", "pod1_name", "pod1_value", "pod2_namespace", "pod2_name", "pod2_value"}, nil,
	metrics.ALPHA, "")

// collector reports the conflicts of the cache of the controller built
// last (one per process outside tests).
type collector struct {
	metrics.BaseStableCollector
	cache atomic.Pointer[volumeCache]
}

var (
	conflictCollector = &collector{}
	registerOnce      sync.Once
)

func registerMetrics(c *volumeCache) {
	conflictCollector.cache.Store(c)
	registerOnce.Do(func() { legacyregistry.CustomMustRegister(conflictCollector) })
}

func (c *collector) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- conflictDesc }

func (c *collector) CollectWithStability(ch chan<- metrics.Metric) {
	vc := c.cache.Load()
	if vc == nil {
		return
	}
	for _, k := range vc.conflicts() {
		ch <- metrics.NewLazyConstMetric(conflictDesc, metrics.GaugeValue, 1,
			k.Property, k.Pod.Namespace, k.Pod.Name, k.Value, k.OtherPod.Namespace, k.OtherPod.Name, k.OtherValue)
	}
}
