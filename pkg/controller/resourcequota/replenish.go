package resourcequota

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
)

// monitorHandler is the resourcemonitor handler of a resource: a deletion,
// or an update that may free quota (evaluator.ReplenishOnUpdate), queues
// the quotas of the object's namespace that track the resource. A
// resource without an evaluator gets an object count one.
func (c *Controller) monitorHandler(r schema.GroupVersionResource) (cache.ResourceEventHandler, error) {
	gr := r.GroupResource()
	logger := c.logger
	if c.registry.AddIfAbsent(evaluator.NewObjectCount(gr, c.count(gr))) {
		logger.V(2).Info("QuotaMonitor created object count evaluator", "resource", gr)
	}
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			if evaluator.ReplenishOnUpdate(gr, oldObj, newObj, c.clock.Now(), c.features) {
				c.replenish(logger, gr, newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			c.replenish(logger, gr, obj)
		},
	}, nil
}

// replenish queues the quotas of obj's namespace whose limits gr's
// evaluator measures.
func (c *Controller) replenish(logger klog.Logger, gr schema.GroupResource, obj any) {
	e := c.registry.Get(gr)
	if e == nil {
		return
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	quotas, err := c.lister.ResourceQuotas(acc.GetNamespace()).List(labels.Everything())
	if err != nil {
		logger.Error(err, "Error checking to see if namespace has any ResourceQuota associated with it", "namespace", acc.GetNamespace())
		return
	}
	for _, q := range quotas {
		if len(e.MatchingResources(quota.ResourceNames(q.Status.Hard))) > 0 {
			logger.V(4).Info("QuotaMonitor replenishing quota", "resource", gr, "object", klog.KObj(acc), "quota", klog.KObj(q))
			c.enqueue(logger, c.queue, q)
		}
	}
}
