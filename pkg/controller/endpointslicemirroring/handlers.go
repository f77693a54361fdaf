package endpointslicemirroring

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// The handlers only decide whether an event concerns a mirrored Endpoints
// object and enqueue its key; everything else happens in syncEndpoints.

func (c *Controller) onServiceAdd(logger klog.Logger, obj any) {
	if svc := serviceOf(logger, obj); svc != nil && svc.Spec.Selector == nil {
		c.enqueue(svc.Namespace, svc.Name)
	}
}

// onServiceUpdate enqueues only when the selector appears or goes: that is
// all the controller reads from a Service.
func (c *Controller) onServiceUpdate(logger klog.Logger, oldObj, newObj any) {
	old, svc := serviceOf(logger, oldObj), serviceOf(logger, newObj)
	if old == nil || svc == nil {
		return
	}
	if (old.Spec.Selector == nil) != (svc.Spec.Selector == nil) {
		c.enqueue(svc.Namespace, svc.Name)
	}
}

func (c *Controller) onServiceDelete(logger klog.Logger, obj any) {
	if svc := serviceOf(logger, obj); svc != nil && svc.Spec.Selector == nil {
		c.enqueue(svc.Namespace, svc.Name)
	}
}

func (c *Controller) onEndpointsAdd(logger klog.Logger, obj any) {
	ep := endpointsOf(logger, obj)
	if ep == nil {
		return
	}
	if !shouldMirror(ep) {
		logger.V(5).Info("Skipping mirroring", "endpoints", klog.KObj(ep))
		return
	}
	c.enqueue(ep.Namespace, ep.Name)
}

// onEndpointsUpdate enqueues when either version is mirrored: an object
// that stops being mirrored must lose its slices.
func (c *Controller) onEndpointsUpdate(logger klog.Logger, oldObj, newObj any) {
	old, ep := endpointsOf(logger, oldObj), endpointsOf(logger, newObj)
	if old == nil || ep == nil {
		return
	}
	if !shouldMirror(old) && !shouldMirror(ep) {
		logger.V(5).Info("Skipping mirroring", "endpoints", klog.KObj(ep))
		return
	}
	c.enqueue(ep.Namespace, ep.Name)
}

func (c *Controller) onEndpointsDelete(logger klog.Logger, obj any) {
	ep := endpointsOf(logger, obj)
	if ep == nil {
		return
	}
	if !shouldMirror(ep) {
		logger.V(5).Info("Skipping mirroring", "endpoints", klog.KObj(ep))
		return
	}
	c.enqueue(ep.Namespace, ep.Name)
}

// onSliceAdd enqueues for a managed slice the controller has not written
// in this version (someone else created it, or the controller restarted).
func (c *Controller) onSliceAdd(logger klog.Logger, obj any) {
	s := sliceOf(logger, obj)
	if s != nil && managedByController(s) && c.tracker.ShouldSync(s) {
		c.enqueueForSlice(logger, s)
	}
}

// onSliceUpdate enqueues when the service-name label moved (both owners),
// when the slice came into or out of this controller's management, or when
// a managed slice changed in a way the controller did not write.
func (c *Controller) onSliceUpdate(logger klog.Logger, oldObj, newObj any) {
	old, s := sliceOf(logger, oldObj), sliceOf(logger, newObj)
	if old == nil || s == nil {
		return
	}
	// Labels do not bump the generation; the tracker would miss this.
	if svc, oldSvc := s.Labels[discovery.LabelServiceName], old.Labels[discovery.LabelServiceName]; svc != oldSvc {
		logger.Info("LabelServiceName changed", "labelServiceName", discovery.LabelServiceName,
			"oldName", oldSvc, "newName", svc, "endpointSlice", klog.KObj(s))
		c.enqueueForSlice(logger, s)
		c.enqueueForSlice(logger, old)
		return
	}
	if managedByController(old) != managedByController(s) || (managedByController(s) && c.tracker.ShouldSync(s)) {
		c.enqueueForSlice(logger, s)
	}
}

// onSliceDelete enqueues when a managed slice the controller knows of was
// deleted without the controller expecting it.
func (c *Controller) onSliceDelete(logger klog.Logger, obj any) {
	s := sliceOf(logger, obj)
	if s == nil || !managedByController(s) || !c.tracker.Has(s) {
		return
	}
	if !c.tracker.HandleDeletion(s) {
		c.enqueueForSlice(logger, s)
	}
}

func (c *Controller) enqueue(namespace, name string) {
	c.queue.Add(namespace + "/" + name)
}

// enqueueForSlice enqueues the Endpoints a slice belongs to after the batch
// period, so that a burst of slice changes costs one sync.
func (c *Controller) enqueueForSlice(logger klog.Logger, s *discovery.EndpointSlice) {
	name := s.Labels[discovery.LabelServiceName]
	if name == "" {
		utilruntime.HandleErrorWithLogger(logger, nil, "EndpointSlice has no service-name label",
			"endpointSlice", klog.KObj(s), "label", discovery.LabelServiceName)
		return
	}
	c.queue.AddAfter(s.Namespace+"/"+name, c.cfg.BatchPeriod)
}

// shouldMirror reports whether an Endpoints object is mirrored at all,
// whatever its Service: not when labelled skip-mirror=true, nor when it
// holds a leader-election record (an old lock object).
func shouldMirror(ep *v1.Endpoints) bool {
	if ep == nil || ep.Labels[discovery.LabelSkipMirror] == "true" {
		return false
	}
	_, lock := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	return !lock
}

// managedByController reports whether this controller manages the slice.
func managedByController(s *discovery.EndpointSlice) bool {
	return s.Labels[discovery.LabelManagedBy] == ControllerName
}

// unwrap returns the object inside a deletion tombstone.
func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

func serviceOf(logger klog.Logger, obj any) *v1.Service {
	svc, ok := unwrap(obj).(*v1.Service)
	if !ok || svc == nil {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Service event", "type", fmt.Sprintf("%T", obj))
		return nil
	}
	return svc
}

func endpointsOf(logger klog.Logger, obj any) *v1.Endpoints {
	ep, ok := unwrap(obj).(*v1.Endpoints)
	if !ok || ep == nil {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Endpoints event", "type", fmt.Sprintf("%T", obj))
		return nil
	}
	return ep
}

func sliceOf(logger klog.Logger, obj any) *discovery.EndpointSlice {
	s, ok := unwrap(obj).(*discovery.EndpointSlice)
	if !ok || s == nil {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in EndpointSlice event", "type", fmt.Sprintf("%T", obj))
		return nil
	}
	return s
}
