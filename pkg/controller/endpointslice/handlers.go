package endpointslice

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

var everything = labels.Everything()

// Handlers only map the changed object to Service keys and enqueue them.

func (c *Controller) addHandlers(logger klog.Logger, svcInformer, podInformer, sliceInformer, nodeInformer cache.SharedIndexInformer) error {
	var regs []cache.ResourceEventHandlerRegistration
	add := func(what string, inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return fmt.Errorf("adding %s event handler: %w", what, err)
		}
		regs = append(regs, reg)
		return nil
	}
	err := add("Service", svcInformer, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueService,
		UpdateFunc: func(_, cur any) { c.enqueueService(cur) },
		DeleteFunc: c.enqueueService,
	})
	if err == nil {
		err = add("Pod", podInformer, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.onPod(logger, nil, obj) },
			UpdateFunc: func(old, cur any) { c.onPod(logger, old, cur) },
			DeleteFunc: func(obj any) { c.onPod(logger, obj, nil) },
		})
	}
	if err == nil {
		err = add("EndpointSlice", sliceInformer, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onSliceAdd,
			UpdateFunc: func(old, cur any) { c.onSliceUpdate(logger, old, cur) },
			DeleteFunc: c.onSliceDelete,
		})
	}
	if err == nil {
		err = add("Node", nodeInformer, cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { c.topologyQueue.Add(topologyKey) },
			UpdateFunc: func(old, cur any) {
				o, ok1 := old.(*v1.Node)
				n, ok2 := cur.(*v1.Node)
				if ok1 && ok2 && nodeReadyOrZoneChanged(o, n) {
					c.topologyQueue.Add(topologyKey)
				}
			},
			DeleteFunc: func(any) { c.topologyQueue.Add(topologyKey) },
		})
	}
	if err != nil {
		return err
	}
	for _, r := range regs {
		c.synced = append(c.synced, r.HasSynced)
	}
	return nil
}

func (c *Controller) enqueueService(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("couldn't get key for object %+v: %w", obj, err))
		return
	}
	c.queue.Add(key)
}

// onPod enqueues, after the batch period (or spaced from the Service's last
// write, endpointutil.WriteSpacing), the Services whose endpoints the pod
// event may change (endpointutil.ServicesForPodChange).
func (c *Controller) onPod(logger klog.Logger, old, cur any) {
	keys, err := endpointutil.ServicesForPodChange(c.serviceIndex, podOf(old), podOf(cur))
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Mapping a pod to its Services")
		return
	}
	for key := range keys {
		endpointutil.EnqueuePodChange(c.queue, c.spacer, key, c.batch)
	}
}

// podOf returns the pod of an event object or tombstone, nil for nil.
func podOf(obj any) *v1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, _ := obj.(*v1.Pod)
	return pod
}

func sliceOf(obj any) *discovery.EndpointSlice {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	s, _ := obj.(*discovery.EndpointSlice)
	return s
}

func managed(s *discovery.EndpointSlice) bool { return s.Labels[discovery.LabelManagedBy] == ManagedBy }

// onSliceAdd syncs the Service of a managed slice the controller did not
// write itself.
func (c *Controller) onSliceAdd(obj any) {
	if s := sliceOf(obj); s != nil && managed(s) && c.tracker.ShouldSync(s) {
		c.enqueueForSlice(s)
	}
}

// onSliceUpdate syncs the Service of a slice that changed hands (its
// Service label or its manager), or of a managed slice changed by someone
// else.
func (c *Controller) onSliceUpdate(logger klog.Logger, old, cur any) {
	prev, s := sliceOf(old), sliceOf(cur)
	if prev == nil || s == nil {
		return
	}
	if svc, prevSvc := s.Labels[discovery.LabelServiceName], prev.Labels[discovery.LabelServiceName]; svc != prevSvc {
		logger.Info("label changed", "label", discovery.LabelServiceName, "oldService", prevSvc, "newService", svc, "endpointslice", klog.KObj(s))
		c.enqueueForSlice(s)
		c.enqueueForSlice(prev)
		return
	}
	if managed(prev) != managed(s) || (managed(s) && c.tracker.ShouldSync(s)) {
		c.enqueueForSlice(s)
	}
}

// onSliceDelete syncs the Service of a tracked slice the controller did
// not delete itself.
func (c *Controller) onSliceDelete(obj any) {
	if s := sliceOf(obj); s != nil && managed(s) && c.tracker.Has(s) && !c.tracker.HandleDeletion(s) {
		c.enqueueForSlice(s)
	}
}

// enqueueForSlice enqueues the slice's Service after at least a second, so
// that changes to several slices are synced together.
func (c *Controller) enqueueForSlice(s *discovery.EndpointSlice) {
	name := s.Labels[discovery.LabelServiceName]
	if name == "" {
		utilruntime.HandleError(fmt.Errorf("couldn't get key for EndpointSlice %s/%s: EndpointSlice missing %s label", s.Namespace, s.Name, discovery.LabelServiceName))
		return
	}
	c.queue.AddAfter(s.Namespace+"/"+name, max(sliceChangeMinDelay, c.batch))
}
