package pvcprotection

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// pvcChanged queues a claim that needs the finalizer or may lose it at
// once, and a bound claim that only lacks its Unused condition at the end
// of the current unusedWindow (see there).
func (c *Controller) pvcChanged(logger klog.Logger, obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "PVC informer returned non-PVC object", "type", fmt.Sprintf("%T", obj))
		return
	}
	key := pvc.Namespace + "/" + pvc.Name
	switch {
	case storageutil.NeedToAddFinalizer(pvc, storageutil.PVCProtectionFinalizer) ||
		storageutil.IsDeletionCandidate(pvc, storageutil.PVCProtectionFinalizer):
		c.queue.Add(key)
	case c.managesUnused(pvc) && findCondition(pvc.Status.Conditions, v1.PersistentVolumeClaimUnused) == nil:
		c.queue.AddAfter(key, c.untilWindowEnds())
	}
}

// untilWindowEnds returns the time left in the current unusedWindow.
func (c *Controller) untilWindowEnds() time.Duration {
	return unusedWindow - time.Duration(c.clock.Now().UnixNano()%int64(unusedWindow))
}

// podChanged queues the claims of a pod that may have stopped (or, for the
// Unused condition, started) using them. An update that replaced a pod by
// another of the same name queues the old pod's claims too.
func (c *Controller) podChanged(logger klog.Logger, old, obj any, deleted bool) {
	pod := asPod(logger, obj)
	if pod == nil {
		return
	}
	c.enqueueClaims(pod, deleted)
	if oldPod := asPod(logger, old); oldPod != nil && oldPod.UID != pod.UID {
		c.enqueueClaims(oldPod, true)
	}
}

func (c *Controller) enqueueClaims(pod *v1.Pod, deleted bool) {
	// Without the Unused condition only pods that can no longer block a
	// deletion matter: deleted, terminated or unscheduled ones.
	if !c.unusedCond && !deleted && !podTerminated(pod) && pod.Spec.NodeName != "" {
		return
	}
	for _, name := range storageutil.ClaimNames(pod) {
		c.queue.Add(pod.Namespace + "/" + name)
	}
}

func asPod(logger klog.Logger, obj any) *v1.Pod {
	if obj == nil {
		return nil
	}
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Pod informer returned non-Pod object", "type", fmt.Sprintf("%T", obj))
		return nil
	}
	return pod
}
