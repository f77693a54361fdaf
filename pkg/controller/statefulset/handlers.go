package statefulset

import (
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// Handlers only resolve the sets an event concerns and enqueue them.

func (c *Controller) enqueue(logger klog.Logger, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Couldn't get key for object", "object", obj)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) onSetUpdate(logger klog.Logger, oldObj, newObj any) {
	oldSet, ok1 := oldObj.(*apps.StatefulSet)
	curSet, ok2 := newObj.(*apps.StatefulSet)
	if ok1 && ok2 && oldSet.Status.Replicas != curSet.Status.Replicas {
		logger.V(4).Info("Observed updated replica count for StatefulSet", "statefulSet", klog.KObj(curSet),
			"oldReplicas", oldSet.Status.Replicas, "newReplicas", curSet.Status.Replicas)
	}
	c.enqueue(logger, newObj)
}

func (c *Controller) onSetDelete(logger klog.Logger, obj any) {
	set, ok := obj.(*apps.StatefulSet)
	if tombstone, isTombstone := obj.(cache.DeletedFinalStateUnknown); isTombstone {
		set, ok = tombstone.Obj.(*apps.StatefulSet)
	}
	if ok {
		c.patches.forget(set.UID)
	}
	c.enqueue(logger, obj)
}

// resolveControllerRef returns the cached set ref names, if it is still
// the same object.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *apps.StatefulSet {
	return controllerref.Resolve(ref, controllerKind.Kind, c.setLister.StatefulSets(namespace).Get)
}

// setsForPod returns the sets whose selector matches an orphan pod.
func (c *Controller) setsForPod(logger klog.Logger, pod *v1.Pod) []*apps.StatefulSet {
	sets, err := c.setLister.GetPodStatefulSets(pod)
	if err != nil {
		return nil
	}
	if len(sets) > 1 {
		names := make([]string, 0, len(sets))
		for _, s := range sets {
			names = append(names, s.Name)
		}
		utilruntime.HandleErrorWithLogger(logger, nil, "More than one StatefulSet is selecting pods with same labels",
			"podLabels", pod.Labels, "sets", names)
	}
	return sets
}

func (c *Controller) onPodAdd(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if pod.DeletionTimestamp != nil {
		// Seen first while already terminating (after a restart).
		c.onPodDelete(logger, pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
			logger.V(4).Info("Pod created with labels", "pod", klog.KObj(pod), "labels", pod.Labels)
			c.enqueue(logger, set)
		}
		return
	}
	sets := c.setsForPod(logger, pod)
	if len(sets) > 0 {
		logger.V(4).Info("Orphan Pod created with labels", "pod", klog.KObj(pod), "labels", pod.Labels)
	}
	for _, set := range sets {
		c.enqueue(logger, set)
	}
}

// onPodUpdate wakes the pod's set (and its previous one when the controller
// changed); a ready pod wakes it again minReadySeconds later, when it
// becomes available. An orphan whose labels changed wakes the sets that
// may adopt it.
func (c *Controller) onPodUpdate(logger klog.Logger, oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	curPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 || curPod.ResourceVersion == oldPod.ResourceVersion {
		return // a resync
	}
	curRef := metav1.GetControllerOfNoCopy(curPod)
	oldRef := metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if set := c.resolveControllerRef(oldPod.Namespace, oldRef); set != nil {
			c.enqueue(logger, set)
		}
	}
	if curRef != nil {
		set := c.resolveControllerRef(curPod.Namespace, curRef)
		if set == nil {
			return
		}
		logger.V(4).Info("Pod objectMeta updated", "pod", klog.KObj(curPod))
		c.enqueue(logger, set)
		if set.Spec.MinReadySeconds > 0 && !podranking.IsReady(oldPod) && podranking.IsReady(curPod) {
			d := time.Duration(set.Spec.MinReadySeconds) * time.Second
			logger.V(2).Info("StatefulSet will be enqueued after minReadySeconds for availability check",
				"statefulSet", klog.KObj(set), "minReadySeconds", set.Spec.MinReadySeconds)
			if key, err := cache.MetaNamespaceKeyFunc(set); err == nil {
				c.queue.AddAfter(key, d)
			}
		}
		return
	}
	if !reflect.DeepEqual(curPod.Labels, oldPod.Labels) || refChanged {
		sets := c.setsForPod(logger, curPod)
		if len(sets) > 0 {
			logger.V(4).Info("Orphan Pod objectMeta updated", "pod", klog.KObj(curPod))
		}
		for _, set := range sets {
			c.enqueue(logger, set)
		}
	}
}

// onPodDelete wakes the set of a deleted pod; obj may be a tombstone.
func (c *Controller) onPodDelete(logger klog.Logger, obj any) {
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
		return
	}
	if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
		logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod))
		c.enqueue(logger, set)
	}
}
