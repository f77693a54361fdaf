package ephemeral

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "ephemeral-volume-controller"
	// eventComponent is the source component of the controller's Events.
	eventComponent = "ephemeral_volume"
	// queueName is upstream's workqueue metrics name.
	queueName = "ephemeral_volume"
)

// Config holds what the controller is built from.
type Config struct {
	Name        string
	Client      kubernetes.Interface
	PodInformer coreinformers.PodInformer
	PVCInformer coreinformers.PersistentVolumeClaimInformer
	Workers     int
}

// Controller creates the claims of generic ephemeral volumes.
type Controller struct {
	name    string
	client  kubernetes.Interface
	workers int

	pods       corelisters.PodLister
	podIndexer cache.Indexer
	pvcs       corelisters.PersistentVolumeClaimLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	recorder     record.EventRecorder
	stopRecorder func()
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// ephemeral-volume-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:        name,
		Client:      client,
		PodInformer: cc.InformerFactory.Core().V1().Pods(),
		PVCInformer: cc.InformerFactory.Core().V1().PersistentVolumeClaims(),
		Workers:     int(cc.Config.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to init ephemeral volume controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	registerMetrics()
	podInformer := cfg.PodInformer.Informer()
	if err := storageutil.AddPodPVCIndex(podInformer); err != nil {
		return nil, fmt.Errorf("could not initialize ephemeral volume controller: %w", err)
	}
	c := &Controller{
		name:       cfg.Name,
		client:     cfg.Client,
		workers:    cfg.Workers,
		pods:       cfg.PodInformer.Lister(),
		podIndexer: podInformer.GetIndexer(),
		pvcs:       cfg.PVCInformer.Lister(),
		queue:      controller.Queue(queueName),
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.enqueuePod})
	if err != nil {
		return nil, fmt.Errorf("could not add pod event handler: %w", err)
	}
	logger := klog.FromContext(ctx)
	pvcReg, err := cfg.PVCInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) { c.pvcDeleted(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("could not add pvc event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, pvcReg.HasSynced}
	c.recorder, c.stopRecorder = controller.NewRecorder(ctx, cfg.Client, eventComponent)
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes pods until ctx is cancelled and returns once the workers
// have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting ephemeral volume controller")
	defer logger.Info("Shutting down ephemeral volume controller")
	defer c.stopRecorder()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// enqueuePod queues a live pod that has a generic ephemeral volume.
func (c *Controller) enqueuePod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.DeletionTimestamp != nil {
		return
	}
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Ephemeral != nil {
			c.queue.Add(pod.Namespace + "/" + pod.Name)
			return
		}
	}
}

// pvcDeleted queues the pods that name the deleted claim: one of them may
// have been waiting for a colliding claim to go, or may need its own claim
// back.
func (c *Controller) pvcDeleted(logger klog.Logger, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	pods, err := storageutil.PodsUsingClaim(c.podIndexer, pvc.Namespace, pvc.Name)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing pods from cache")
		return
	}
	for _, p := range pods {
		c.enqueuePod(p)
	}
}
