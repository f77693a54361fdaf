package expand

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "expand-controller"
	// eventComponent is the source component of the controller's Events.
	eventComponent = "volume_expand"
	// queueName is upstream's workqueue metrics name.
	queueName = "volume_expand"
	// workers is upstream's fixed worker count.
	workers = 10
)

// Controller hands claim expansions to external resizers.
type Controller struct {
	name   string
	client kubernetes.Interface
	pvcs   corelisters.PersistentVolumeClaimLister
	pvs    corelisters.PersistentVolumeLister
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]

	recorder     record.EventRecorder
	stopRecorder func()
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// persistentvolume-expander-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, name, client,
		cc.InformerFactory.Core().V1().PersistentVolumeClaims(), cc.InformerFactory.Core().V1().PersistentVolumes())
	if err != nil {
		return nil, fmt.Errorf("failed to init volume expand controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O. Upstream reads
// the volume with a GET per sync; the shared volume informer (which the
// binder runs anyway) answers here.
func NewController(ctx context.Context, name string, client kubernetes.Interface,
	pvcInformer coreinformers.PersistentVolumeClaimInformer, pvInformer coreinformers.PersistentVolumeInformer) (*Controller, error) {
	c := &Controller{
		name:   name,
		client: client,
		pvcs:   pvcInformer.Lister(),
		pvs:    pvInformer.Lister(),
		queue:  controller.Queue(queueName),
	}
	pvcReg, err := pvcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.claimUpdated,
	})
	if err != nil {
		return nil, fmt.Errorf("could not add pvc event handler: %w", err)
	}
	pvReg, err := pvInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{})
	if err != nil {
		return nil, fmt.Errorf("could not add pv event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{pvcReg.HasSynced, pvReg.HasSynced}
	c.recorder, c.stopRecorder = controller.NewRecorder(ctx, client, eventComponent)
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes claims until ctx is cancelled and returns once the workers
// have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting expand controller")
	defer logger.Info("Shutting down expand controller")
	defer c.stopRecorder()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

// claimUpdated queues a claim whose request or status capacity grew.
func (c *Controller) claimUpdated(oldObj, newObj any) {
	oldPVC, ok := oldObj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	newPVC, ok := newObj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	oldReq, newReq := oldPVC.Spec.Resources.Requests[v1.ResourceStorage], newPVC.Spec.Resources.Requests[v1.ResourceStorage]
	oldCap, newCap := oldPVC.Status.Capacity[v1.ResourceStorage], newPVC.Status.Capacity[v1.ResourceStorage]
	if newReq.Cmp(oldReq) > 0 || newCap.Cmp(oldCap) > 0 {
		c.enqueue(newObj)
	}
}

// enqueue queues a Bound claim.
func (c *Controller) enqueue(obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok || pvc.Status.Phase != v1.ClaimBound {
		return
	}
	c.queue.Add(pvc.Namespace + "/" + pvc.Name)
}
