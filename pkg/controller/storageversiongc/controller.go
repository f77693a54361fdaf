package storageversiongc

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "storage-version-garbage-collector"
	// leaseQueueName and storageVersionQueueName are upstream's workqueue
	// metrics names.
	leaseQueueName          = "storage_version_garbage_collector_leases"
	storageVersionQueueName = "storage_version_garbage_collector_storageversions"
)

// Controller removes the StorageVersion entries of kube-apiservers whose
// identity Lease is gone.
type Controller struct {
	name   string
	client kubernetes.Interface
	leases coordlisters.LeaseLister

	leaseQueue          workqueue.TypedRateLimitingInterface[string]
	storageVersionQueue workqueue.TypedRateLimitingInterface[string]
	synced              []cache.InformerSynced
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// storageversion-garbage-collector-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, name, client, cc.InformerFactory)
	if err != nil {
		return nil, fmt.Errorf("failed to init %s: %w", name, err)
	}
	return c, nil
}

// NewController builds the controller on f's Lease and StorageVersion
// informers; it does no API I/O.
func NewController(ctx context.Context, name string, client kubernetes.Interface, f informers.SharedInformerFactory) (*Controller, error) {
	leaseInformer := f.Coordination().V1().Leases()
	svInformer := f.Internal().V1alpha1().StorageVersions()
	c := &Controller{
		name:                name,
		client:              client,
		leases:              leaseInformer.Lister(),
		leaseQueue:          controller.Queue(leaseQueueName),
		storageVersionQueue: controller.Queue(storageVersionQueueName),
	}
	logger := klog.FromContext(ctx)
	leaseReg, err := leaseInformer.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) { c.leaseDeleted(logger, obj) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to Lease informer: %w", err)
	}
	svReg, err := svInformer.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.storageVersionChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.storageVersionChanged(logger, obj) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to StorageVersion informer: %w", err)
	}
	c.synced = []cache.InformerSynced{leaseReg.HasSynced, svReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run runs one worker per queue until ctx is cancelled and returns once
// both have exited. Deleted Leases and suspect StorageVersions are rare;
// the two workers may race on one object, and a conflict is retried.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting storage version garbage collector")
	defer logger.Info("Shutting down storage version garbage collector")
	var wg sync.WaitGroup
	for _, w := range []*controller.Workers{
		{Name: c.name, Queue: c.leaseQueue, Sync: c.syncLease, WaitFor: c.synced},
		{Name: c.name, Queue: c.storageVersionQueue, Sync: c.syncStorageVersion, WaitFor: c.synced},
	} {
		wg.Go(func() { w.Run(ctx, 1) })
	}
	wg.Wait()
}
