package podgroupprotection

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "podgroup-protection-controller"
	// Finalizer is upstream's PodGroupProtectionFinalizer, stamped by the
	// kube-apiserver's PodGroupProtection admission plugin.
	Finalizer = "scheduling.k8s.io/podgroup-protection"
	// queueName is upstream's workqueue metrics name.
	queueName = "podgroupprotection"
	// workers is fixed to one, as upstream does; there is no flag.
	workers = 1
)

// Controller removes the protection finalizer from deleted PodGroups that
// no active pod names any more.
type Controller struct {
	name       string
	client     kubernetes.Interface
	podGroups  schedulinglisters.PodGroupLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// podgroup-protection-controller.
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

// NewController builds the controller on f's PodGroup and Pod informers;
// it does no API I/O.
func NewController(ctx context.Context, name string, client kubernetes.Interface, f informers.SharedInformerFactory) (*Controller, error) {
	pgInformer := f.Scheduling().V1beta1().PodGroups()
	podInformer := f.Core().V1().Pods().Informer()
	if err := addActivePodIndex(podInformer); err != nil {
		return nil, fmt.Errorf("could not initialize PodGroup protection controller: %w", err)
	}
	c := &Controller{
		name:       name,
		client:     client,
		podGroups:  pgInformer.Lister(),
		podIndexer: podInformer.GetIndexer(),
		queue:      controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)
	pgReg, err := pgInformer.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podGroupChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.podGroupChanged(logger, obj) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to PodGroup informer: %w", err)
	}
	podReg, err := podInformer.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { c.podUpdated(logger, old, obj) },
		DeleteFunc: func(obj any) { c.podDeleted(logger, obj) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to Pod informer: %w", err)
	}
	c.synced = []cache.InformerSynced{pgReg.HasSynced, podReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes PodGroups until ctx is cancelled and returns once the
// worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting PodGroup protection controller")
	defer logger.Info("Shutting down PodGroup protection controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}
