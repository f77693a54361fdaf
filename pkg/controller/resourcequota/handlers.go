package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// quotaHandlers queue a quota when it is created, when its spec.hard
// changes and when it is deleted. Status updates (this controller's own,
// and quota admission's charges) queue nothing: a recalculation reads a
// whole namespace, and admission keeps status.used current itself.
func (c *Controller) quotaHandlers(logger klog.Logger) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.addQuota(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) {
			oldQuota, ok1 := oldObj.(*corev1.ResourceQuota)
			newQuota, ok2 := newObj.(*corev1.ResourceQuota)
			if !ok1 || !ok2 || quota.Equals(oldQuota.Spec.Hard, newQuota.Spec.Hard) {
				return
			}
			c.addQuota(logger, newQuota)
		},
		DeleteFunc: func(obj any) { c.enqueue(logger, c.queue, obj) },
	}
}

// addQuota queues a quota whose status lacks its spec's limits, or the
// usage of a limit some evaluator measures, on the priority queue, any
// other on the primary queue.
func (c *Controller) addQuota(logger klog.Logger, obj any) {
	q, ok := obj.(*corev1.ResourceQuota)
	if !ok {
		return
	}
	if c.missingUsage(q) {
		c.enqueue(logger, c.priority, q)
		return
	}
	c.enqueue(logger, c.queue, q)
}

func (c *Controller) missingUsage(q *corev1.ResourceQuota) bool {
	if !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
		return true
	}
	for name := range q.Status.Hard {
		if _, ok := q.Status.Used[name]; ok {
			continue
		}
		for _, e := range c.registry.List() {
			if len(e.MatchingResources([]corev1.ResourceName{name})) > 0 {
				return true
			}
		}
	}
	return false
}

type adder interface{ Add(string) }

func (c *Controller) enqueue(logger klog.Logger, q adder, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		logger.Error(err, "Couldn't get key", "object", obj)
		return
	}
	q.Add(key)
}
