package attachdetach

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's identity for the controller; Events carry it
	// as their source.
	ClientName = "attachdetach-controller"
	// DefaultMaxWaitForUnmount is upstream's reconciler wait for the kubelet
	// to unmount before a forced detach.
	DefaultMaxWaitForUnmount = 6 * time.Minute
	// verifyKey is the queue key of the periodic check that attached
	// volumes are still attached; node names cannot contain "/".
	verifyKey = "/verify"
)

// Options tune a controller; zero fields take upstream's defaults.
type Options struct {
	// SyncPeriod is --attach-detach-reconcile-sync-period: how often
	// attached volumes are checked against their VolumeAttachments.
	SyncPeriod time.Duration
	// DisableSync is --disable-attach-detach-reconcile-sync.
	DisableSync bool
	// DisableForceDetachOnTimeout is --disable-force-detach-on-timeout.
	DisableForceDetachOnTimeout bool
	// MaxWaitForUnmount is upstream's fixed six minutes; tests shorten it.
	MaxWaitForUnmount time.Duration
}

// Controller attaches and detaches CSI volumes through VolumeAttachments.
type Controller struct {
	name     string
	client   kubernetes.Interface
	clock    clock.WithTicker
	recorder record.EventRecorder
	stop     func()
	queue    workqueue.TypedRateLimitingInterface[string]

	podIndexer      cache.Indexer
	nodeLister      corelisters.NodeLister
	pvcLister       corelisters.PersistentVolumeClaimLister
	pvLister        corelisters.PersistentVolumeLister
	csiDriverLister storagelisters.CSIDriverLister
	vaLister        storagelisters.VolumeAttachmentLister
	synced          []cache.InformerSynced

	syncPeriod                  time.Duration
	disableSync                 bool
	disableForceDetachOnTimeout bool
	maxWaitForUnmount           time.Duration

	// state is touched only by the single worker.
	state *state
	// counts is the worker's summary of state for the metrics.
	counts volumeCounts
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// persistentvolume-attach-detach-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	cfg := cc.Config.AttachDetachController
	return NewWithOptions(ctx, cc, name, Options{
		SyncPeriod:                  cfg.ReconcilerSyncLoopPeriod.Duration,
		DisableSync:                 cfg.DisableAttachDetachReconcilerSync,
		DisableForceDetachOnTimeout: cfg.DisableForceDetachOnTimeout,
	})
}

// NewWithOptions is New with explicit options.
func NewWithOptions(ctx context.Context, cc *controllermanager.ControllerContext, name string, opts Options) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	f := cc.InformerFactory
	c, err := newController(ctx, name, client, cc.Clock, f.Core().V1().Pods(), f.Core().V1().Nodes(),
		f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(),
		f.Storage().V1().CSIDrivers(), f.Storage().V1().VolumeAttachments(), opts)
	if err != nil {
		return nil, fmt.Errorf("could not create the attach detach controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker,
	pods coreinformers.PodInformer, nodes coreinformers.NodeInformer,
	pvcs coreinformers.PersistentVolumeClaimInformer, pvs coreinformers.PersistentVolumeInformer,
	drivers storageinformers.CSIDriverInformer, vas storageinformers.VolumeAttachmentInformer, opts Options) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if opts.MaxWaitForUnmount <= 0 {
		opts.MaxWaitForUnmount = DefaultMaxWaitForUnmount
	}
	recorder, stop := controller.NewRecorder(ctx, client, ClientName)
	c := &Controller{
		name:                        name,
		client:                      client,
		clock:                       clk,
		recorder:                    recorder,
		stop:                        stop,
		queue:                       controller.Queue("attachdetach"),
		podIndexer:                  pods.Informer().GetIndexer(),
		nodeLister:                  nodes.Lister(),
		pvcLister:                   pvcs.Lister(),
		pvLister:                    pvs.Lister(),
		csiDriverLister:             drivers.Lister(),
		vaLister:                    vas.Lister(),
		syncPeriod:                  opts.SyncPeriod,
		disableSync:                 opts.DisableSync,
		disableForceDetachOnTimeout: opts.DisableForceDetachOnTimeout,
		maxWaitForUnmount:           opts.MaxWaitForUnmount,
		state:                       newState(),
	}
	registerControllerMetrics(c)
	if err := nodeutil.AddPodNodeNameIndexer(pods.Informer()); err != nil {
		return nil, err
	}
	if err := storageutil.AddPodPVCIndex(pods.Informer()); err != nil {
		return nil, err
	}
	podReg, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePod,
		UpdateFunc: func(_, obj any) { c.enqueuePod(obj) },
		DeleteFunc: c.enqueuePod,
	})
	if err != nil {
		return nil, fmt.Errorf("could not add pod event handler: %w", err)
	}
	nodeReg, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNode,
		UpdateFunc: func(_, obj any) { c.enqueueNode(obj) },
		DeleteFunc: c.enqueueNode,
	})
	if err != nil {
		return nil, fmt.Errorf("could not add node event handler: %w", err)
	}
	pvcReg, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueClaim,
		UpdateFunc: func(_, obj any) { c.enqueueClaim(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("could not add pvc event handler: %w", err)
	}
	vaReg, err := vas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueAttachment,
		UpdateFunc: func(_, obj any) { c.enqueueAttachment(obj) },
		DeleteFunc: c.enqueueAttachment,
	})
	if err != nil {
		return nil, fmt.Errorf("could not add volumeattachment event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, nodeReg.HasSynced, pvcReg.HasSynced,
		pvs.Informer().HasSynced, drivers.Informer().HasSynced, vaReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, rebuilds the attached volumes from the nodes'
// status and the VolumeAttachments, then runs one worker (the state is its
// alone) and the periodic verification until ctx is cancelled.
func (c *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer c.stop()
	logger := klog.FromContext(ctx)
	logger.Info("Starting attach detach controller")
	defer logger.Info("Shutting down attach detach controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		c.queue.ShutDown()
		return
	}
	if err := c.populate(logger); err != nil {
		logger.Error(err, "Error populating the actual state of world")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.tick(ctx)
	}()
	w := &controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync}
	w.Run(ctx, 1)
	<-done
}

// tick enqueues the verification every sync period; the verification also
// syncs every known node again, as upstream's populator re-lists pods.
func (c *Controller) tick(ctx context.Context) {
	period := c.syncPeriod
	if period < time.Second {
		period = time.Minute
	}
	t := c.clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.queue.Add(verifyKey)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	if key == verifyKey {
		return c.verify(ctx)
	}
	return c.syncNode(ctx, key)
}

// populate is upstream's populateActualStateOfWorld: volumes the nodes report
// attached are attached (mounted as their volumesInUse say), and
// VolumeAttachments of PersistentVolumes not reported are uncertain.
func (c *Controller) populate(logger klog.Logger) error {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, node := range nodes {
		ns := c.state.node(node.Name)
		ns.nodeUID, ns.nodeRV, ns.inUse = node.UID, node.ResourceVersion, node.Status.VolumesInUse
		if _, ok := node.Annotations[managedAnnotation]; ok {
			ns.managed = true
		}
		for _, av := range node.Status.VolumesAttached {
			driver, handle, ok := splitUniqueVolumeName(av.Name)
			ns.volumes[av.Name] = &attachment{driver: driver, handle: handle, devicePath: av.DevicePath,
				foreign: !ok, inASW: true, confirmed: true, reported: true, multiAttach: true}
		}
		c.queue.Add(node.Name)
	}
	vas, err := c.vaLister.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, va := range vas {
		if va.Spec.Source.PersistentVolumeName == nil {
			logger.Info("Skipping the va as its pvName is nil", "node", klog.KRef("", va.Spec.NodeName), "vaName", va.Name)
			continue
		}
		pv, err := c.pvLister.Get(*va.Spec.Source.PersistentVolumeName)
		if err != nil || pv.Spec.CSI == nil {
			logger.Info("Skipping the va: no CSI PersistentVolume", "vaName", va.Name, "err", err)
			continue
		}
		name := uniqueVolumeName(pv.Spec.CSI.Driver, pv.Spec.CSI.VolumeHandle)
		ns := c.state.node(va.Spec.NodeName)
		if a := ns.volumes[name]; a != nil {
			a.specName, a.multiAttach = pv.Name, multiAttachAllowed(pv)
			continue
		}
		ns.volumes[name] = &attachment{driver: pv.Spec.CSI.Driver, handle: pv.Spec.CSI.VolumeHandle,
			specName: pv.Name, multiAttach: multiAttachAllowed(pv), inASW: true, mountedUntilRV: ns.nodeRV}
		c.queue.Add(va.Spec.NodeName)
	}
	return nil
}

// verify is upstream's reconciler sync: an attached volume whose
// VolumeAttachment is missing or no longer attached is marked detached (and
// attached again if still wanted).
func (c *Controller) verify(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for name, ns := range c.state.nodes {
		c.queue.Add(name)
		if c.disableSync || c.syncPeriod < time.Second {
			continue
		}
		for vn, a := range ns.volumes {
			if !a.confirmed || a.op != opNone || a.foreign || a.specName == "" {
				continue
			}
			if required, err := c.attachRequired(a.driver); err == nil && !required {
				continue
			}
			if c.stillAttached(ctx, attachmentName(a.handle, a.driver, name)) {
				continue
			}
			logger.Info("Volume is not attached any more, marking it detached", "volume", vn, "node", klog.KRef("", name))
			if a.reported {
				ns.statusNeeded = true
			}
			delete(ns.volumes, vn)
		}
	}
	return nil
}

func (c *Controller) stillAttached(ctx context.Context, name string) bool {
	va, err := c.vaLister.Get(name)
	if apierrors.IsNotFound(err) {
		va, err = c.client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
	}
	return err == nil && va.Status.Attached
}

func (c *Controller) enqueuePod(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" && len(pod.Spec.Volumes) > 0 {
		c.queue.Add(pod.Spec.NodeName)
	}
}

func (c *Controller) enqueueNode(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if node, ok := obj.(*v1.Node); ok {
		c.queue.Add(node.Name)
	}
}

func (c *Controller) enqueueClaim(obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok || pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName == "" {
		return
	}
	nodes, err := nodesUsingClaim(c.podIndexer, pvc.Namespace, pvc.Name)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, n := range nodes {
		c.queue.Add(n)
	}
}

func (c *Controller) enqueueAttachment(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if va, ok := obj.(*storagev1.VolumeAttachment); ok && va.Spec.NodeName != "" {
		c.queue.Add(va.Spec.NodeName)
	}
}
