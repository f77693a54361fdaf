package pvprotection

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "pv-protection-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "pvprotection"
	// workers is fixed to one, as upstream does.
	workers = 1
)

// Controller adds and removes the PersistentVolume protection finalizer.
type Controller struct {
	name   string
	client kubernetes.Interface
	pvs    corelisters.PersistentVolumeLister
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// persistentvolume-protection-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	return NewController(ctx, name, client, cc.InformerFactory.Core().V1().PersistentVolumes())
}

// NewController builds the controller on pvInformer; it does no API I/O.
func NewController(ctx context.Context, name string, client kubernetes.Interface, pvInformer coreinformers.PersistentVolumeInformer) (*Controller, error) {
	c := &Controller{
		name:   name,
		client: client,
		pvs:    pvInformer.Lister(),
		queue:  controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)
	reg, err := pvInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.pvChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.pvChanged(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("could not add PV event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes volumes until ctx is cancelled and returns once the worker
// has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting PV protection controller")
	defer logger.Info("Shutting down PV protection controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

// pvChanged queues a volume that needs the finalizer or may lose it.
func (c *Controller) pvChanged(logger klog.Logger, obj any) {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "PV informer returned non-PV object", "type", fmt.Sprintf("%T", obj))
		return
	}
	if storageutil.NeedToAddFinalizer(pv, storageutil.PVProtectionFinalizer) ||
		storageutil.IsDeletionCandidate(pv, storageutil.PVProtectionFinalizer) {
		c.queue.Add(pv.Name)
	}
}

// sync removes the finalizer from a deleted volume that is not Bound and
// adds it to a live volume that lacks it.
func (c *Controller) sync(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	pv, err := c.pvs.Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("PV not found, ignoring", "PV", klog.KRef("", name))
		return nil
	}
	if err != nil {
		return err
	}
	if storageutil.IsDeletionCandidate(pv, storageutil.PVProtectionFinalizer) {
		if pv.Status.Phase != v1.VolumeBound {
			return c.update(ctx, pv, storageutil.WithoutFinalizer(pv.Finalizers, storageutil.PVProtectionFinalizer), "Removed protection finalizer from PV")
		}
		logger.V(4).Info("Keeping PV because it is being used", "PV", klog.KObj(pv))
	}
	if storageutil.NeedToAddFinalizer(pv, storageutil.PVProtectionFinalizer) {
		return c.update(ctx, pv, storageutil.WithFinalizer(pv.Finalizers, storageutil.PVProtectionFinalizer), "Added protection finalizer to PV")
	}
	return nil
}

func (c *Controller) update(ctx context.Context, pv *v1.PersistentVolume, finalizers []string, done string) error {
	clone := pv.DeepCopy()
	clone.Finalizers = finalizers
	if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of PV %s: %w", pv.Name, err)
	}
	klog.FromContext(ctx).V(3).Info(done, "PV", klog.KObj(pv))
	return nil
}
