package deployment

import (
	"fmt"
	"reflect"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// Handlers only resolve the Deployments an event concerns and enqueue
// their keys; syncs read everything else from the listers.

func (c *Controller) enqueue(d *apps.Deployment) {
	c.queue.Add(deploymentKey(d))
}

func deploymentKey(d *apps.Deployment) string {
	return d.Namespace + "/" + d.Name
}

// tombstoned unwraps a DeletedFinalStateUnknown; its object may be stale.
func tombstoned[T any](logger klog.Logger, obj any) (T, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t, ok := obj.(T)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in delete event", "type", fmt.Sprintf("%T", obj))
	}
	return t, ok
}

func (c *Controller) addDeployment(logger klog.Logger, obj any) {
	if d, ok := obj.(*apps.Deployment); ok {
		logger.V(4).Info("Adding deployment", "deployment", klog.KObj(d))
		c.enqueue(d)
	}
}

// updateDeployment enqueues on every update, resyncs included: a periodic
// full check that costs only cache reads when nothing changed.
func (c *Controller) updateDeployment(logger klog.Logger, obj any) {
	if d, ok := obj.(*apps.Deployment); ok {
		logger.V(4).Info("Updating deployment", "deployment", klog.KObj(d))
		c.enqueue(d)
	}
}

func (c *Controller) deleteDeployment(logger klog.Logger, obj any) {
	if d, ok := tombstoned[*apps.Deployment](logger, obj); ok {
		logger.V(4).Info("Deleting deployment", "deployment", klog.KObj(d))
		c.enqueue(d)
	}
}

// resolveControllerRef returns the Deployment ref points to, if it is a
// Deployment and still the same object (UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *apps.Deployment {
	return controllerref.Resolve(ref, controllerKind.Kind, c.dLister.Deployments(namespace).Get)
}

// deploymentsSelecting returns the Deployments whose (non-empty) selector
// matches rs: those that may adopt it. More than one is the user's mistake;
// the controllerRef then decides.
func (c *Controller) deploymentsSelecting(logger klog.Logger, rs *apps.ReplicaSet) []*apps.Deployment {
	if len(rs.Labels) == 0 {
		return nil
	}
	all, err := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*apps.Deployment
	for _, d := range all {
		selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, d)
	}
	if len(out) > 1 {
		logger.V(4).Info("user error! more than one deployment is selecting replica set",
			"replicaSet", klog.KObj(rs), "labels", rs.Labels, "deployment", klog.KObj(out[0]))
	}
	return out
}

func (c *Controller) addReplicaSet(logger klog.Logger, obj any) {
	rs, ok := obj.(*apps.ReplicaSet)
	if !ok {
		return
	}
	if rs.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (after a restart).
		c.deleteReplicaSet(logger, rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			logger.V(4).Info("ReplicaSet added", "replicaSet", klog.KObj(rs))
			c.enqueue(d)
		}
		return
	}
	ds := c.deploymentsSelecting(logger, rs)
	if len(ds) > 0 {
		logger.V(4).Info("Orphan ReplicaSet added", "replicaSet", klog.KObj(rs))
	}
	for _, d := range ds {
		c.enqueue(d)
	}
}

// updateReplicaSet wakes the Deployments an update concerns: the old and
// the new controller when the controllerRef changed, or, for an orphan
// whose labels changed, every Deployment that might adopt it.
func (c *Controller) updateReplicaSet(logger klog.Logger, oldObj, newObj any) {
	oldRS, ok1 := oldObj.(*apps.ReplicaSet)
	curRS, ok2 := newObj.(*apps.ReplicaSet)
	if !ok1 || !ok2 || curRS.ResourceVersion == oldRS.ResourceVersion {
		// A resync: nothing changed.
		return
	}
	curRef := metav1.GetControllerOfNoCopy(curRS)
	oldRef := metav1.GetControllerOfNoCopy(oldRS)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := c.resolveControllerRef(oldRS.Namespace, oldRef); d != nil {
			c.enqueue(d)
		}
	}
	if curRef != nil {
		if d := c.resolveControllerRef(curRS.Namespace, curRef); d != nil {
			logger.V(4).Info("ReplicaSet updated", "replicaSet", klog.KObj(curRS))
			c.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(curRS.Labels, oldRS.Labels) {
		ds := c.deploymentsSelecting(logger, curRS)
		if len(ds) > 0 {
			logger.V(4).Info("Orphan ReplicaSet updated", "replicaSet", klog.KObj(curRS))
		}
		for _, d := range ds {
			c.enqueue(d)
		}
	}
}

func (c *Controller) deleteReplicaSet(logger klog.Logger, obj any) {
	rs, ok := tombstoned[*apps.ReplicaSet](logger, obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		// Nobody cares about orphans going away.
		return
	}
	if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
		logger.V(4).Info("ReplicaSet deleted", "replicaSet", klog.KObj(rs))
		c.enqueue(d)
	}
}

// deletePod wakes a Recreate Deployment, which waits for its old pods to
// be gone before it scales the new ReplicaSet up.
func (c *Controller) deletePod(logger klog.Logger, obj any) {
	pod, ok := tombstoned[*v1.Pod](logger, obj)
	if !ok {
		return
	}
	d := c.deploymentOfPod(pod)
	if d == nil || d.Spec.Strategy.Type != apps.RecreateDeploymentStrategyType {
		return
	}
	logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod))
	c.enqueue(d)
}

// deploymentOfPod follows the pod's controllerRef to its ReplicaSet and
// that one's to its Deployment.
func (c *Controller) deploymentOfPod(pod *v1.Pod) *apps.Deployment {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return nil
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	if ref = metav1.GetControllerOfNoCopy(rs); ref == nil {
		return nil
	}
	return c.resolveControllerRef(rs.Namespace, ref)
}
