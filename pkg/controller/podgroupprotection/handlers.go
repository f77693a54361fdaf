package podgroupprotection

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// activePodIndex is upstream's name of the index of non-terminal pods by
// "namespace/podGroupName".
const activePodIndex = "activePodSchedulingGroup"

func addActivePodIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[activePodIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{activePodIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return nil, nil
		}
		if key := activeKey(pod); key != "" {
			return []string{key}, nil
		}
		return nil, nil
	}})
}

// groupKey is the "namespace/name" key of the PodGroup the pod names, ""
// if it names none.
func groupKey(pod *v1.Pod) string {
	if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName
}

// activeKey is the pod's key in activePodIndex: its group's key while the
// pod is not terminal, else "".
func activeKey(pod *v1.Pod) string {
	if terminated(pod) {
		return ""
	}
	return groupKey(pod)
}

// terminated reports whether the pod has completed (Succeeded or Failed).
func terminated(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// deletionCandidate reports whether the PodGroup is being deleted and
// still holds the finalizer: whether this controller has a decision to make.
func deletionCandidate(pg *schedulingv1beta1.PodGroup) bool {
	return pg.DeletionTimestamp != nil && slices.Contains(pg.Finalizers, Finalizer)
}

// podGroupChanged queues a PodGroup that is being deleted and still has
// the finalizer.
func (c *Controller) podGroupChanged(logger klog.Logger, obj any) {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "PodGroup informer returned non-PodGroup object", "type", fmt.Sprintf("%T", obj))
		return
	}
	if !deletionCandidate(pg) {
		return
	}
	logger.V(4).Info("Got event on PodGroup", "podGroup", klog.KObj(pg))
	c.queue.Add(pg.Namespace + "/" + pg.Name)
}

// podUpdated queues the PodGroup the old pod kept in use when the update
// takes the pod out of the group's active pods: it turned terminal, or
// the update masks a deletion and a re-creation under the same name.
func (c *Controller) podUpdated(logger klog.Logger, old, obj any) {
	oldPod, ok1 := old.(*v1.Pod)
	pod, ok2 := obj.(*v1.Pod)
	if !ok1 || !ok2 {
		return
	}
	key := activeKey(oldPod)
	if key == "" || (oldPod.UID == pod.UID && activeKey(pod) == key) {
		return
	}
	c.enqueueFor(logger, oldPod, key)
}

// podDeleted queues the PodGroup the deleted pod named.
func (c *Controller) podDeleted(logger klog.Logger, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Pod informer returned non-Pod object", "type", fmt.Sprintf("%T", obj))
		return
	}
	if key := groupKey(pod); key != "" {
		c.enqueueFor(logger, pod, key)
	}
}

func (c *Controller) enqueueFor(logger klog.Logger, pod *v1.Pod, key string) {
	logger.V(4).Info("Enqueuing PodGroup for pod event", "pod", klog.KObj(pod), "podGroup", key)
	c.queue.Add(key)
}
