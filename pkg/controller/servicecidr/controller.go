package servicecidr

import (
	"context"
	"fmt"
	"time"

	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ControllerName is the Event source and the server-side apply field
	// manager of the status the controller writes.
	ControllerName = "service-cidr-controller"
	// ClientName is the client (and ServiceAccount) identity, upstream's.
	ClientName = "service-cidrs-controller"
	// Finalizer holds a ServiceCIDR while IPAddresses depend on it.
	Finalizer = "networking.k8s.io/service-cidr-finalizer"
	// IPAllocatorManager is the managed-by label value of the IPAddresses
	// the kube-apiserver allocates for Services.
	IPAllocatorManager = "ipallocator.k8s.io"
	// DeletionGracePeriod is how long after its deletion a ServiceCIDR
	// keeps its finalizer even when nothing depends on it: the
	// kube-apiserver's allocators must have seen it go first.
	DeletionGracePeriod = 10 * time.Second

	queueName  = "ipaddresses"
	maxRetries = 15
	// workers is fixed, as upstream has no flag for it.
	workers = 5
)

// Controller keeps ServiceCIDRs' finalizer and Ready condition.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.WithTicker

	cidrLister networkinglisters.ServiceCIDRLister
	ipLister   networkinglisters.IPAddressLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	// recorder is set by Run before any worker starts, unless a test did.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the service-cidr-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client,
		cc.InformerFactory.Networking().V1().ServiceCIDRs(),
		cc.InformerFactory.Networking().V1().IPAddresses(),
		cc.Clock)
	if err != nil {
		return nil, fmt.Errorf("error creating ServiceCIDR controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface,
	cidrs networkinginformers.ServiceCIDRInformer, ips networkinginformers.IPAddressInformer, clk clock.WithTicker) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:       name,
		client:     client,
		clock:      clk,
		cidrLister: cidrs.Lister(),
		ipLister:   ips.Lister(),
		// The grace period's requeue runs on the injected clock.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	cidrReg, err := cidrs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onServiceCIDRAdd(logger, obj) },
		UpdateFunc: func(_, newObj any) { c.onServiceCIDRChange(newObj) },
		DeleteFunc: c.onServiceCIDRChange,
	})
	if err != nil {
		return nil, fmt.Errorf("adding ServiceCIDR event handler: %w", err)
	}
	ipReg, err := ips.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.onIPAddress,
		DeleteFunc: c.onIPAddress,
	})
	if err != nil {
		return nil, fmt.Errorf("adding IPAddress event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{cidrReg.HasSynced, ipReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the workers until ctx is cancelled.
// It returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "controller", ControllerName)
	defer logger.Info("Shutting down", "controller", ControllerName)

	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, ControllerName)
		defer stop()
		c.recorder = recorder
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, MaxRetries: maxRetries, WaitFor: c.synced}
	w.Run(ctx, workers)
}
