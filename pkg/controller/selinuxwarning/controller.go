package selinuxwarning

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// eventComponent is the source component of the controller's Events.
	eventComponent = "selinux_warning"
	// queueName is upstream's workqueue metrics name.
	queueName = "selinux_warning"
	// workers is fixed to one, as upstream does.
	workers = 1
)

// Config holds what the controller is built from.
type Config struct {
	Name              string
	Client            kubernetes.Interface
	PodInformer       coreinformers.PodInformer
	PVCInformer       coreinformers.PersistentVolumeClaimInformer
	PVInformer        coreinformers.PersistentVolumeInformer
	CSIDriverInformer storageinformers.CSIDriverInformer
}

// Controller reports pods that use one volume with conflicting SELinux
// labels or change policies.
type Controller struct {
	name   string
	client kubernetes.Interface

	pods       corelisters.PodLister
	podIndexer cache.Indexer
	pvcs       corelisters.PersistentVolumeClaimLister
	pvs        corelisters.PersistentVolumeLister
	csiDrivers storagelisters.CSIDriverLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	cache      *volumeCache

	recorder     record.EventRecorder
	stopRecorder func()
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// selinux-warning-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(name)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:              name,
		Client:            client,
		PodInformer:       cc.InformerFactory.Core().V1().Pods(),
		PVCInformer:       cc.InformerFactory.Core().V1().PersistentVolumeClaims(),
		PVInformer:        cc.InformerFactory.Core().V1().PersistentVolumes(),
		CSIDriverInformer: cc.InformerFactory.Storage().V1().CSIDrivers(),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to start SELinux warning controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O. The last
// controller built is the one the conflict metric reports.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	podInformer := cfg.PodInformer.Informer()
	if err := storageutil.AddPodPVCIndex(podInformer); err != nil {
		return nil, fmt.Errorf("could not initialize SELinux warning controller: %w", err)
	}
	c := &Controller{
		name:       cfg.Name,
		client:     cfg.Client,
		pods:       cfg.PodInformer.Lister(),
		podIndexer: podInformer.GetIndexer(),
		pvcs:       cfg.PVCInformer.Lister(),
		pvs:        cfg.PVInformer.Lister(),
		csiDrivers: cfg.CSIDriverInformer.Lister(),
		queue:      controller.Queue(queueName),
		cache:      newVolumeCache(),
	}
	logger := klog.FromContext(ctx)
	for _, h := range []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{podInformer, cache.ResourceEventHandlerFuncs{AddFunc: c.enqueuePod, UpdateFunc: c.updatePod, DeleteFunc: c.enqueuePod}},
		{cfg.PVCInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addPVC(logger, obj) },
			UpdateFunc: func(old, cur any) { c.updatePVC(logger, old, cur) },
		}},
		{cfg.PVInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addPV(logger, obj) },
			UpdateFunc: func(old, cur any) { c.updatePV(logger, old, cur) },
		}},
		{cfg.CSIDriverInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.addCSIDriver,
			UpdateFunc: c.updateCSIDriver,
			DeleteFunc: c.deleteCSIDriver,
		}},
	} {
		reg, err := h.informer.AddEventHandler(h.handler)
		if err != nil {
			return nil, fmt.Errorf("could not add event handler: %w", err)
		}
		c.synced = append(c.synced, reg.HasSynced)
	}
	c.recorder, c.stopRecorder = controller.NewRecorder(ctx, cfg.Client, eventComponent)
	registerMetrics(c.cache)
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes pods until ctx is cancelled and returns once the worker
// has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting SELinux warning controller")
	defer logger.Info("Shutting down SELinux warning controller")
	defer c.stopRecorder()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

func (c *Controller) enqueuePod(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("couldn't get key for pod %#v: %w", obj, err))
		return
	}
	c.queue.Add(key)
}

// updatePod queues a pod that has just finished: the volumes, labels and
// policy it is recorded with are immutable, but a finished pod's volumes
// are unmounted.
func (c *Controller) updatePod(old, cur any) {
	oldPod, ok := old.(*v1.Pod)
	if !ok {
		return
	}
	pod, ok := cur.(*v1.Pod)
	if !ok || oldPod.Status.Phase == pod.Status.Phase {
		return
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		c.enqueuePod(pod)
	}
}

// addPVC queues the pods of a claim that is bound.
func (c *Controller) addPVC(logger klog.Logger, obj any) {
	if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok && pvc.Spec.VolumeName != "" {
		c.enqueueClaimPods(logger, pvc.Namespace, pvc.Name)
	}
}

// updatePVC queues the pods of a claim whose volume changed.
func (c *Controller) updatePVC(logger klog.Logger, old, cur any) {
	oldPVC, ok := old.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	if pvc, ok := cur.(*v1.PersistentVolumeClaim); ok && pvc.Spec.VolumeName != oldPVC.Spec.VolumeName {
		c.enqueueClaimPods(logger, pvc.Namespace, pvc.Name)
	}
}

// addPV queues the pods of the claim a volume is bound to.
func (c *Controller) addPV(logger klog.Logger, obj any) {
	if pv, ok := obj.(*v1.PersistentVolume); ok {
		if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
			c.enqueueClaimPods(logger, ref.Namespace, ref.Name)
		}
	}
}

// updatePV queues the pods of the claim a volume was just bound to.
func (c *Controller) updatePV(logger klog.Logger, old, cur any) {
	oldPV, ok := old.(*v1.PersistentVolume)
	if !ok {
		return
	}
	pv, ok := cur.(*v1.PersistentVolume)
	if !ok {
		return
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return
	}
	if oldRef := oldPV.Spec.ClaimRef; oldRef == nil || oldRef.UID != ref.UID {
		c.enqueueClaimPods(logger, ref.Namespace, ref.Name)
	}
}

func (c *Controller) enqueueClaimPods(logger klog.Logger, namespace, name string) {
	pods, err := storageutil.PodsUsingClaim(c.podIndexer, namespace, name)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing pods from cache")
		return
	}
	for _, p := range pods {
		c.enqueuePod(p)
	}
}

// A CSIDriver's seLinuxMount decides whether its volumes are mounted with
// -o context, and so each pod's effective policy: the pods using its
// volumes are looked at again when it appears, changes it, or goes while
// it was true.

func (c *Controller) addCSIDriver(obj any) {
	if d, ok := obj.(*storagev1.CSIDriver); ok {
		c.enqueueDriverPods(d.Name)
	}
}

func (c *Controller) updateCSIDriver(old, cur any) {
	oldDriver, ok := old.(*storagev1.CSIDriver)
	if !ok {
		return
	}
	d, ok := cur.(*storagev1.CSIDriver)
	if ok && ptr.Deref(oldDriver.Spec.SELinuxMount, false) != ptr.Deref(d.Spec.SELinuxMount, false) {
		c.enqueueDriverPods(d.Name)
	}
}

func (c *Controller) deleteCSIDriver(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if d, ok := obj.(*storagev1.CSIDriver); ok && ptr.Deref(d.Spec.SELinuxMount, false) {
		c.enqueueDriverPods(d.Name)
	}
}

func (c *Controller) enqueueDriverPods(driver string) {
	for _, p := range c.cache.podsUsingDriver(driver) {
		c.queue.Add(p.String())
	}
}
