package replicaset

import (
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// Handlers only resolve owners and enqueue keys; the one thing they update
// is the expectations, which exist to count what the informers observe.

func (c *Controller) enqueue(obj metav1.Object) {
	c.queue.Add(objectKey(obj))
}

// objectKey is the namespace/name key of obj.
func objectKey(obj metav1.Object) string {
	return obj.GetNamespace() + "/" + obj.GetName()
}

// podKey identifies a pod in the deletion expectations.
func podKey(pod *v1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}

func (c *Controller) addOwner(logger klog.Logger, obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Unexpected object in add event", "kind", c.kind.Kind)
		return
	}
	logger.V(4).Info("Adding", "kind", c.kind.Kind, "object", klog.KObj(m))
	c.enqueue(m)
}

func (c *Controller) updateOwner(logger klog.Logger, oldObj, newObj any) {
	oldM, err1 := meta.Accessor(oldObj)
	newM, err2 := meta.Accessor(newObj)
	if err1 != nil || err2 != nil {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in update event", "kind", c.kind.Kind)
		return
	}
	// A deletion and re-creation under the same name that the informer saw
	// as an update: forget what was expected of the old object.
	if oldM.GetUID() != newM.GetUID() {
		c.deleteOwner(logger, cache.DeletedFinalStateUnknown{Key: objectKey(oldM), Obj: oldObj})
	}
	// Every update is synced, not just spec changes: a sync that has
	// nothing to do costs only cache reads. A change of status alone (most
	// often the controller's own write coming back) is spaced like the pod
	// status changes it reports.
	if statusOnlyChange(oldM, newM) {
		c.statusSpacer.Add(c.queue, objectKey(newM))
		return
	}
	c.enqueue(newM)
}

// statusOnlyChange reports whether an owner's update changed neither its
// spec (generation) nor the metadata that syncing acts on.
func statusOnlyChange(oldM, newM metav1.Object) bool {
	return oldM.GetUID() == newM.GetUID() &&
		oldM.GetGeneration() == newM.GetGeneration() &&
		oldM.GetDeletionTimestamp().Equal(newM.GetDeletionTimestamp()) &&
		reflect.DeepEqual(oldM.GetLabels(), newM.GetLabels()) &&
		reflect.DeepEqual(oldM.GetOwnerReferences(), newM.GetOwnerReferences())
}

func (c *Controller) deleteOwner(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Unexpected object in delete event", "kind", c.kind.Kind, "type", fmt.Sprintf("%T", obj))
		return
	}
	key := objectKey(m)
	logger.V(4).Info("Deleting", "kind", c.kind.Kind, "object", klog.KObj(m))
	c.consistency.Clear(types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID())
	// A new object of the same name must start clean.
	c.expectations.DeleteExpectations(logger, key)
	c.statusSpacer.Forget(key)
	c.queue.Add(key)
}

// resolveControllerRef returns the owner ref points to, if it is of this
// controller's kind and still the same object (UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *apps.ReplicaSet {
	return controllerref.Resolve(ref, c.kind.Kind, func(name string) (*apps.ReplicaSet, error) { return c.owners.Get(namespace, name) })
}

// addPod counts an expected creation and wakes the pod's owner, or, for an
// orphan, every owner that might adopt it.
func (c *Controller) addPod(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already terminating (e.g. after a
		// restart): not a creation this controller waits for.
		c.deletePod(logger, pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		rs := c.resolveControllerRef(pod.Namespace, ref)
		if rs == nil {
			return
		}
		key := objectKey(rs)
		logger.V(4).Info("Pod created", "pod", klog.KObj(pod))
		c.expectations.CreationObserved(logger, key)
		c.queue.Add(key)
		return
	}
	// No controller waits for an orphan: do not count it as a creation.
	rss := c.owners.ForPod(pod)
	if len(rss) > 0 {
		logger.V(4).Info("Orphan Pod created", "pod", klog.KObj(pod))
	}
	for _, rs := range rss {
		c.enqueue(rs)
	}
}

// updatePod wakes the owners a pod change concerns: a pod being deleted
// counts as deleted; a change of controllerRef wakes the old owner too; an
// orphan whose labels changed wakes the owners that might adopt it.
func (c *Controller) updatePod(logger klog.Logger, oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	curPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 || curPod.ResourceVersion == oldPod.ResourceVersion {
		// A resync: nothing changed.
		return
	}
	labelsChanged := !reflect.DeepEqual(curPod.Labels, oldPod.Labels)
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion started: replacements need not wait for the
		// pod to be gone. The old labels may have selected another owner.
		c.deletePod(logger, curPod)
		if labelsChanged {
			c.deletePod(logger, oldPod)
		}
		return
	}

	curRef := metav1.GetControllerOfNoCopy(curPod)
	oldRef := metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolveControllerRef(oldPod.Namespace, oldRef); rs != nil {
			c.enqueue(rs)
		}
	}

	if curRef != nil {
		rs := c.resolveControllerRef(curPod.Namespace, curRef)
		if rs == nil {
			return
		}
		logger.V(4).Info("Pod objectMeta updated", "pod", klog.KObj(curPod))
		if labelsChanged || refChanged || setback(oldPod, curPod) || c.maySettle(rs, oldPod, curPod) {
			// A release, an adoption, a replacement to create, a fall
			// in readiness, or the last pod becoming ready: at once.
			c.enqueue(rs)
		} else {
			c.statusSpacer.Add(c.queue, objectKey(rs))
		}
		// A pod that just became ready becomes available minReadySeconds
		// later; nothing else will wake the owner then.
		if rs.Spec.MinReadySeconds > 0 && !podranking.IsReady(oldPod) && podranking.IsReady(curPod) {
			d := time.Duration(rs.Spec.MinReadySeconds) * time.Second
			logger.V(2).Info("Pod will be enqueued after a while for availability check", "duration", d, "kind", c.kind.Kind, "pod", klog.KObj(curPod))
			c.queue.AddAfter(objectKey(rs), d)
		}
		return
	}

	if labelsChanged || refChanged {
		rss := c.owners.ForPod(curPod)
		if len(rss) > 0 {
			logger.V(4).Info("Orphan Pod objectMeta updated", "pod", klog.KObj(curPod))
		}
		for _, rs := range rss {
			c.enqueue(rs)
		}
	}
}

// setback reports whether a pod stopped being active (it needs a
// replacement) or ready.
func setback(oldPod, curPod *v1.Pod) bool {
	return podranking.IsActive(oldPod) && !podranking.IsActive(curPod) ||
		podranking.IsReady(oldPod) && !podranking.IsReady(curPod)
}

// maySettle reports whether curPod becoming ready may be the last change
// rs waits for, so that its sync (which writes a settled status at once)
// should not be spaced. With minReadySeconds 0 ready is available; with
// more, the availability check enqueues rs at once when the time comes.
//
// The written status may lag behind pods whose readiness a spaced sync has
// yet to write, so unless it already lacks only this pod, the ready pods
// are counted - only while a sync would be spaced at all, and at the cost
// of one pass over rs's pods in the index.
func (c *Controller) maySettle(rs *apps.ReplicaSet, oldPod, curPod *v1.Pod) bool {
	if podranking.IsReady(oldPod) || !podranking.IsReady(curPod) {
		return false
	}
	want := desiredReplicas(rs)
	if rs.Status.ReadyReplicas+1 >= want {
		return true
	}
	if c.statusSpacer.Delay(objectKey(rs)) == 0 {
		return false // not spaced anyway
	}
	pods, err := controllerref.PodsByOwner(c.podIndexer, rs, c.kind.Kind, false)
	if err != nil {
		return false
	}
	var ready int32
	for _, p := range pods {
		if podranking.IsActive(p) && podranking.IsReady(p) {
			ready++
		}
	}
	return ready >= want
}

// deletePod counts an expected deletion and wakes the pod's owner. obj may
// be a tombstone, whose pod may be stale.
func (c *Controller) deletePod(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Pod delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		// Nobody cares about orphans going away.
		return
	}
	rs := c.resolveControllerRef(pod.Namespace, ref)
	if rs == nil {
		return
	}
	key := objectKey(rs)
	logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod), "deletionTimestamp", pod.DeletionTimestamp)
	c.expectations.DeletionObserved(logger, key, podKey(pod))
	c.queue.Add(key)
}
