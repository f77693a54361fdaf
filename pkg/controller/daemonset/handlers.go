package daemonset

import (
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
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

func objectKey(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// podKey identifies a pod in the deletion expectations.
func podKey(namespace, name string) string { return namespace + "/" + name }

func (c *Controller) enqueue(ds *apps.DaemonSet) { c.queue.Add(objectKey(ds)) }

func (c *Controller) enqueueAfter(ds *apps.DaemonSet, d time.Duration) {
	c.queue.AddAfter(objectKey(ds), d)
}

// untombstone returns the object a delete event carries, which may be a
// tombstone holding a possibly stale object.
func untombstone[T any](obj any) (T, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	return v, ok
}

func (c *Controller) addDaemonSet(logger klog.Logger, obj any) {
	ds, ok := obj.(*apps.DaemonSet)
	if !ok {
		return
	}
	logger.V(4).Info("Adding daemon set", "daemonset", klog.KObj(ds))
	c.enqueue(ds)
}

// updateDaemonSet syncs every update but the echo of the controller's own
// last status write (writtenStatuses).
func (c *Controller) updateDaemonSet(logger klog.Logger, oldObj, newObj any) {
	oldDS, ok1 := oldObj.(*apps.DaemonSet)
	curDS, ok2 := newObj.(*apps.DaemonSet)
	if !ok1 || !ok2 {
		return
	}
	// A deletion and re-creation under the same name that the informer saw
	// as an update: forget what was expected of the old object.
	if curDS.UID != oldDS.UID {
		c.deleteDaemonSet(logger, cache.DeletedFinalStateUnknown{Key: objectKey(oldDS), Obj: oldDS})
	}
	if c.written.echo(objectKey(curDS), oldDS, curDS) {
		logger.V(5).Info("Own status write observed", "daemonset", klog.KObj(curDS))
		return
	}
	logger.V(4).Info("Updating daemon set", "daemonset", klog.KObj(oldDS))
	c.enqueue(curDS)
}

func (c *Controller) deleteDaemonSet(logger klog.Logger, obj any) {
	ds, ok := untombstone[*apps.DaemonSet](obj)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in DaemonSet delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	logger.V(4).Info("Deleting daemon set", "daemonset", klog.KObj(ds))
	key := objectKey(ds)
	c.consistency.Clear(types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}, ds.UID)
	// A new DaemonSet of the same name must start clean.
	c.expectations.DeleteExpectations(logger, key)
	c.placements.forget(ds.UID)
	c.written.forget(key)
	c.statusSpacer.Forget(key)
	c.queue.Add(key)
}

// resolveControllerRef returns the DaemonSet ref points to, if it is one
// and still the same object (UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *apps.DaemonSet {
	return controllerref.Resolve(ref, controllerKind.Kind, c.dsLister.DaemonSets(namespace).Get)
}

// daemonSetsForPod returns the DaemonSets whose selector matches an orphan
// pod (which might adopt it).
func (c *Controller) daemonSetsForPod(logger klog.Logger, pod *v1.Pod) []*apps.DaemonSet {
	sets, err := c.dsLister.GetPodDaemonSets(pod)
	if err != nil {
		return nil
	}
	if len(sets) > 1 {
		// The controllerRef decides; overlapping selectors are still the user's mistake.
		utilruntime.HandleErrorWithLogger(logger, nil, "user error! more than one daemon is selecting pods", "labels", pod.Labels)
	}
	return sets
}

// addPod counts an expected creation and wakes the pod's DaemonSet, or,
// for an orphan, every DaemonSet that might adopt it.
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
		ds := c.resolveControllerRef(pod.Namespace, ref)
		if ds == nil {
			return
		}
		logger.V(4).Info("Pod added", "pod", klog.KObj(pod))
		key := objectKey(ds)
		c.expectations.CreationObserved(logger, key)
		c.wake(logger, key)
		return
	}
	// No DaemonSet waits for an orphan: not a creation.
	sets := c.daemonSetsForPod(logger, pod)
	if len(sets) > 0 {
		logger.V(4).Info("Orphan Pod added", "pod", klog.KObj(pod))
	}
	for _, ds := range sets {
		c.enqueue(ds)
	}
}

// updatePod wakes the DaemonSets a pod change concerns: a pod being
// deleted counts as deleted; a change of controllerRef wakes the old owner
// too; an orphan whose labels changed wakes those that might adopt it.
func (c *Controller) updatePod(logger klog.Logger, oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	curPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 || curPod.ResourceVersion == oldPod.ResourceVersion {
		// A resync: nothing changed.
		return
	}
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion started: the replacement need not wait for
		// the pod to be gone.
		c.deletePod(logger, curPod)
		return
	}
	curRef := metav1.GetControllerOfNoCopy(curPod)
	oldRef := metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolveControllerRef(oldPod.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := c.resolveControllerRef(curPod.Namespace, curRef)
		if ds == nil {
			return
		}
		logger.V(4).Info("Pod updated", "pod", klog.KObj(curPod))
		if refChanged || mayAct(ds, oldPod, curPod) || c.maySettle(ds, oldPod, curPod, curRef) {
			c.enqueue(ds)
		} else {
			c.statusSpacer.Add(c.queue, objectKey(ds))
		}
		// A pod that just became ready becomes available minReadySeconds
		// later; nothing else will wake the DaemonSet then. The second
		// more guards against clock skew, as upstream.
		if ds.Spec.MinReadySeconds > 0 && !podranking.IsReady(oldPod) && podranking.IsReady(curPod) {
			c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if !reflect.DeepEqual(curPod.Labels, oldPod.Labels) || refChanged {
		sets := c.daemonSetsForPod(logger, curPod)
		if len(sets) > 0 {
			logger.V(4).Info("Orphan Pod updated", "pod", klog.KObj(curPod))
		}
		for _, ds := range sets {
			c.enqueue(ds)
		}
	}
}

// mayAct reports whether a change of one of ds's pods may make a sync do
// more than write status: labels (hash, selector), a change of the node
// the pod is for, a terminal phase, or readiness while it matters to a
// rolling update (the pod is old, or the DaemonSet is rolling) or
// may settle the DaemonSet by the written NumberReady (maySettle finds the
// last ready pod when that count lags). The scheduler binding a pod to
// the node its affinity pins it to changes no count and no decision on a
// node with one pod; on a node with several (surge) it may change which
// one counts, which the spaced sync then catches. Upstream syncs at once on every pod
// update; in the 500-node roll the bindings were a fifth of the syncs.
func mayAct(ds *apps.DaemonSet, oldPod, curPod *v1.Pod) bool {
	switch {
	case !reflect.DeepEqual(oldPod.Labels, curPod.Labels), isTerminal(oldPod) != isTerminal(curPod),
		oldPod.Spec.NodeName != curPod.Spec.NodeName && !sameTarget(oldPod, curPod):
		return true
	case podranking.IsReady(oldPod) == podranking.IsReady(curPod):
		return false
	}
	st := ds.Status
	oldTemplate := curPod.Labels[generationLabel] != ds.Annotations[apps.DeprecatedTemplateGeneration]
	rolling := st.ObservedGeneration != ds.Generation || st.UpdatedNumberScheduled != st.CurrentNumberScheduled || st.NumberMisscheduled > 0
	lastReady := podranking.IsReady(curPod) && st.NumberReady+1 >= st.DesiredNumberScheduled
	return oldTemplate || rolling || lastReady
}

// maySettle reports whether a pod that just became ready may be the
// last one ds waits for: its written status has an updated pod on every
// node that should run one and on no other, and every pod it controls is
// now ready. mayAct's guess from the written NumberReady misses the last
// pod when several became ready since the last (spaced) write, as when
// the scheduler binds a DaemonSet's pods for many new nodes in a burst:
// the goal was then written up to a spacing period late, and whoever
// waits for the rollout (kubectl rollout status) waited as long. The
// index lookup runs only for a pod turning ready once every node has an
// updated pod, and stops at the first pod not ready.
func (c *Controller) maySettle(ds *apps.DaemonSet, oldPod, curPod *v1.Pod, ref *metav1.OwnerReference) bool {
	st := ds.Status
	if ds.Spec.MinReadySeconds > 0 || podranking.IsReady(oldPod) || !podranking.IsReady(curPod) ||
		st.ObservedGeneration != ds.Generation || st.NumberMisscheduled != 0 ||
		st.CurrentNumberScheduled != st.DesiredNumberScheduled || st.UpdatedNumberScheduled != st.DesiredNumberScheduled {
		return false
	}
	objs, err := c.podIndexer.ByIndex(controllerref.PodControllerIndex, controllerref.PodControllerIndexKey(curPod.Namespace, ref))
	if err != nil {
		return false
	}
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); !ok || p.DeletionTimestamp == nil && !podranking.IsReady(p) {
			return false
		}
	}
	return true
}

// sameTarget reports whether two versions of a pod are for the same node.
func sameTarget(a, b *v1.Pod) bool {
	an, aErr := targetNodeName(a)
	bn, bErr := targetNodeName(b)
	return aErr == nil && bErr == nil && an == bn
}

// deletePod counts an expected deletion and wakes the pod's DaemonSet.
func (c *Controller) deletePod(logger klog.Logger, obj any) {
	pod, ok := untombstone[*v1.Pod](obj)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Pod delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		// Nobody cares about orphans going away.
		return
	}
	ds := c.resolveControllerRef(pod.Namespace, ref)
	if ds == nil {
		return
	}
	logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod))
	key := objectKey(ds)
	c.expectations.DeletionObserved(logger, key, podKey(pod.Namespace, pod.Name))
	c.wake(logger, key)
}

// wake syncs a DaemonSet after one of its pods was observed created or
// deleted: at once if that was the last one expected (the sync may act),
// spaced otherwise (the sync can only write status).
func (c *Controller) wake(logger klog.Logger, key string) {
	if c.expectations.SatisfiedExpectations(logger, key) {
		c.queue.Add(key)
		return
	}
	c.statusSpacer.Add(c.queue, key)
}

// daemonSetsForRevision returns the DaemonSets whose selector matches an
// orphaned revision.
func (c *Controller) daemonSetsForRevision(logger klog.Logger, rev *apps.ControllerRevision) []*apps.DaemonSet {
	sets, err := c.dsLister.GetHistoryDaemonSets(rev)
	if err != nil || len(sets) == 0 {
		return nil
	}
	if len(sets) > 1 {
		logger.V(4).Info("Found more than one DaemonSet selecting the ControllerRevision. This is potentially a user error",
			"controllerRevision", klog.KObj(rev), "labels", rev.Labels)
	}
	return sets
}

// addRevision wakes the DaemonSets that might adopt an orphaned revision.
// A revision with an owner changes nothing for it: it created the
// revision itself (upstream only logs it).
func (c *Controller) addRevision(logger klog.Logger, obj any) {
	rev, ok := obj.(*apps.ControllerRevision)
	if !ok {
		return
	}
	if rev.DeletionTimestamp != nil {
		c.deleteRevision(logger, rev)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil {
		if c.resolveControllerRef(rev.Namespace, ref) != nil {
			logger.V(4).Info("Observed a ControllerRevision", "controllerRevision", klog.KObj(rev))
		}
		return
	}
	sets := c.daemonSetsForRevision(logger, rev)
	if len(sets) > 0 {
		logger.V(4).Info("Orphan ControllerRevision added", "controllerRevision", klog.KObj(rev))
	}
	for _, ds := range sets {
		c.enqueue(ds)
	}
}

// updateRevision wakes the owner of a changed revision, its old owner if
// the controllerRef changed, and for an orphan whose labels changed the
// DaemonSets that might adopt it.
func (c *Controller) updateRevision(logger klog.Logger, oldObj, newObj any) {
	oldRev, ok1 := oldObj.(*apps.ControllerRevision)
	curRev, ok2 := newObj.(*apps.ControllerRevision)
	if !ok1 || !ok2 || curRev.ResourceVersion == oldRev.ResourceVersion {
		return
	}
	curRef := metav1.GetControllerOfNoCopy(curRev)
	oldRef := metav1.GetControllerOfNoCopy(oldRev)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolveControllerRef(oldRev.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		if ds := c.resolveControllerRef(curRev.Namespace, curRef); ds != nil {
			logger.V(4).Info("Observed an update to a ControllerRevision", "controllerRevision", klog.KObj(curRev))
			c.enqueue(ds)
		}
		return
	}
	if !reflect.DeepEqual(curRev.Labels, oldRev.Labels) || refChanged {
		sets := c.daemonSetsForRevision(logger, curRev)
		if len(sets) > 0 {
			logger.V(4).Info("Orphan ControllerRevision updated", "controllerRevision", klog.KObj(curRev))
		}
		for _, ds := range sets {
			c.enqueue(ds)
		}
	}
}

// deleteRevision wakes the owner of a deleted revision.
func (c *Controller) deleteRevision(logger klog.Logger, obj any) {
	rev, ok := untombstone[*apps.ControllerRevision](obj)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ControllerRevision delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	ref := metav1.GetControllerOfNoCopy(rev)
	if ref == nil {
		return
	}
	if ds := c.resolveControllerRef(rev.Namespace, ref); ds != nil {
		logger.V(4).Info("ControllerRevision deleted", "controllerRevision", klog.KObj(rev))
		c.enqueue(ds)
	}
}
