package podautoscaler

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// addHPA registers a new HPA in the selector store (selecting nothing
// until its first sync knows the target's selector) and syncs it at once.
func (c *Controller) addHPA(logger klog.Logger, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Couldn't get key for object", "object", obj)
		return
	}
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	if c.selectors.putIfAbsent(types.NamespacedName{Namespace: ns, Name: name}, labels.Nothing()) {
		observeHPAAdded()
	}
	c.queue.Add(key)
}

// updateHPA syncs at once after a spec change (a new generation, with
// HPAGeneration) and otherwise waits out the sync period: the
// controller's own status writes must not cause a sync each.
func (c *Controller) updateHPA(logger klog.Logger, oldObj, newObj any) {
	oldHPA, okOld := oldObj.(*autoscalingv2.HorizontalPodAutoscaler)
	newHPA, okNew := newObj.(*autoscalingv2.HorizontalPodAutoscaler)
	if okOld && okNew && c.observedGeneration && oldHPA.Generation != newHPA.Generation {
		c.addHPA(logger, newHPA)
		return
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(newObj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Couldn't get key for object", "object", newObj)
		return
	}
	c.queue.AddRateLimited(key)
}

// deleteHPA forgets the HPA's selector and recorded writes; its sync
// forgets the rest.
func (c *Controller) deleteHPA(logger klog.Logger, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Couldn't get key for object", "object", obj)
		return
	}
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		if tombstone, isTombstone := obj.(cache.DeletedFinalStateUnknown); isTombstone {
			hpa, _ = tombstone.Obj.(*autoscalingv2.HorizontalPodAutoscaler)
		}
	}
	if hpa != nil {
		c.consistency.Clear(types.NamespacedName{Namespace: hpa.Namespace, Name: hpa.Name}, hpa.UID)
	}
	c.queue.Forget(key)
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	c.selectors.delete(types.NamespacedName{Namespace: ns, Name: name})
	observeHPADeleted()
}
