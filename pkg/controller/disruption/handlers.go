package disruption

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Event reasons, upstream's.
const (
	reasonMultiplePDBs    = "MultiplePodDisruptionBudgets"
	reasonNoPods          = "NoPods"
	reasonCalculateFailed = "CalculateExpectedPodCountFailed"
	reasonUnmanagedPods   = "UnmanagedPods"
	reasonNotDeleted      = "NotDeleted"
)

// addHandlers registers the budget and pod handlers and collects what Run
// waits for: those handlers and the workload informers the finders read.
func (c *Controller) addHandlers(logger klog.Logger, f informers.SharedInformerFactory) error {
	pdbReg, err := f.Policy().V1().PodDisruptionBudgets().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueBudget(logger, obj) },
		UpdateFunc: func(_, obj any) { c.enqueueBudget(logger, obj) },
		DeleteFunc: func(obj any) { c.enqueueBudget(logger, obj) },
	})
	if err != nil {
		return fmt.Errorf("adding PodDisruptionBudget event handler: %w", err)
	}
	podReg, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(logger, nil, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.podChanged(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.podDeleted(logger, obj) },
	})
	if err != nil {
		return fmt.Errorf("adding Pod event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{
		podReg.HasSynced, pdbReg.HasSynced,
		f.Core().V1().ReplicationControllers().Informer().HasSynced,
		f.Apps().V1().ReplicaSets().Informer().HasSynced,
		f.Apps().V1().Deployments().Informer().HasSynced,
		f.Apps().V1().StatefulSets().Informer().HasSynced,
	}
	return nil
}

// enqueueBudget queues a budget that was added, updated (status writes
// included: a sync that follows its own write finds nothing to do, as
// upstream's) or deleted.
func (c *Controller) enqueueBudget(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pdb, ok := obj.(*policy.PodDisruptionBudget)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in PodDisruptionBudget event", "type", fmt.Sprintf("%T", obj))
		return
	}
	logger.V(4).Info("PodDisruptionBudget changed", "podDisruptionBudget", klog.KObj(pdb))
	c.queue.Add(pdb.Namespace + "/" + pdb.Name)
}

// podChanged queues the budgets selecting an added or updated pod (and,
// when its labels changed, those that selected it before), and the pod
// itself for the moment its DisruptionTarget condition becomes stale.
func (c *Controller) podChanged(logger klog.Logger, oldObj, newObj any) {
	pod, ok := newObj.(*v1.Pod)
	if !ok {
		return
	}
	c.enqueueBudgetsOf(logger, pod)
	if old, ok := oldObj.(*v1.Pod); ok && !reflect.DeepEqual(old.Labels, pod.Labels) {
		for _, pdb := range c.budgetsFor(logger, old) {
			c.queue.Add(pdb.Namespace + "/" + pdb.Name)
		}
	}
	if stale, after := staleDisruptionCondition(pod, c.staleTimeout, c.clock.Now()); stale {
		c.staleQueue.AddAfter(pod.Namespace+"/"+pod.Name, after)
		logger.V(4).Info("Enqueued pod to cleanup stale DisruptionTarget condition", "pod", klog.KObj(pod))
	}
}

// podDeleted queues the budgets that selected the pod. obj may be a
// tombstone, whose pod may be stale.
func (c *Controller) podDeleted(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Pod delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.enqueueBudgetsOf(logger, pod)
}

// enqueueBudgetsOf queues every budget selecting pod. Like upstream, a
// pod selected by more than one gets a MultiplePodDisruptionBudgets Event
// naming one of them (the first by name); upstream queues only that one.
func (c *Controller) enqueueBudgetsOf(logger klog.Logger, pod *v1.Pod) {
	pdbs := c.budgetsFor(logger, pod)
	if len(pdbs) > 1 {
		msg := fmt.Sprintf("Pod %q/%q matches multiple PodDisruptionBudgets.  Chose %q arbitrarily.", pod.Namespace, pod.Name, pdbs[0].Name)
		logger.Info(msg)
		c.recorder.Event(pod, v1.EventTypeWarning, reasonMultiplePDBs, msg)
	}
	for _, pdb := range pdbs {
		c.queue.Add(pdb.Namespace + "/" + pdb.Name)
	}
}

// budgetsFor returns the budgets selecting pod, sorted by name.
func (c *Controller) budgetsFor(logger klog.Logger, pod *v1.Pod) []*policy.PodDisruptionBudget {
	pdbs, err := budgetsForPod(c.pdbIndexer, pod)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Looking up the PodDisruptionBudgets of a pod", "pod", klog.KObj(pod))
		return nil
	}
	return pdbs
}
