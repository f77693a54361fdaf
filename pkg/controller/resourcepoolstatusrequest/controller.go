package resourcepoolstatusrequest

import (
	"context"
	"fmt"
	"sync"

	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourcev1listers "k8s.io/client-go/listers/resource/v1"
	resourcev1alpha3listers "k8s.io/client-go/listers/resource/v1alpha3"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "resourcepoolstatusrequest-controller"
	// maxRetries is how often a request is retried before it is dropped
	// (upstream's).
	maxRetries = 5
	// workers is fixed to one, as upstream does; there is no flag.
	workers = 1
)

// Controller answers ResourcePoolStatusRequests once, from the cached
// ResourceSlices, ResourceClaims and DeviceTaintRules, and deletes them
// when they expire.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.WithTicker

	requests resourcev1alpha3listers.ResourcePoolStatusRequestLister
	slices   resourcev1listers.ResourceSliceLister
	claims   resourcev1listers.ResourceClaimLister
	// taintRules is nil unless DRADeviceTaintRules is on, so that a
	// cluster not serving DeviceTaintRules does not wait for their cache.
	taintRules resourcev1listers.DeviceTaintRuleLister

	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// resourcepoolstatusrequest-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	taintRules := features.Enabled(cc.FeatureGate, features.DRADeviceTaintRules)
	c, err := NewController(ctx, name, client, cc.Clock, cc.InformerFactory, taintRules)
	if err != nil {
		return nil, fmt.Errorf("failed to init resourcepoolstatusrequest controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller on f's informers, reading
// DeviceTaintRules only if taintRules (DRADeviceTaintRules) is set; it
// does no API I/O.
func NewController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker,
	f informers.SharedInformerFactory, taintRules bool) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	logger := klog.FromContext(ctx)
	requestInformer := f.Resource().V1alpha3().ResourcePoolStatusRequests()
	sliceInformer := f.Resource().V1().ResourceSlices()
	claimInformer := f.Resource().V1().ResourceClaims()
	c := &Controller{
		name:     name,
		client:   client,
		clock:    clk,
		requests: requestInformer.Lister(),
		slices:   sliceInformer.Lister(),
		claims:   claimInformer.Lister(),
		// Unnamed, as upstream's: no workqueue metrics.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Clock: controller.QueueClock(nil)},
		),
	}
	c.synced = []cache.InformerSynced{sliceInformer.Informer().HasSynced, claimInformer.Informer().HasSynced}
	if taintRules {
		ruleInformer := f.Resource().V1().DeviceTaintRules()
		c.taintRules = ruleInformer.Lister()
		c.synced = append(c.synced, ruleInformer.Informer().HasSynced)
	}
	registerMetrics()
	reg, err := requestInformer.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.requestChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.requestChanged(logger, obj) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return nil, fmt.Errorf("failed to add request event handler: %w", err)
	}
	c.synced = append(c.synced, reg.HasSynced)
	logger.Info("ResourcePoolStatusRequest controller initialized")
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run answers requests and collects expired ones until ctx is cancelled,
// and returns once its goroutines have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting ResourcePoolStatusRequest controller")
	defer logger.Info("Shutting down ResourcePoolStatusRequest controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced, MaxRetries: maxRetries}
	var wg sync.WaitGroup
	wg.Go(func() {
		if cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
			c.runCleanup(ctx)
		}
	})
	w.Run(ctx, workers)
	wg.Wait()
}

// runCleanup deletes expired requests at once and then every
// cleanupInterval on the controller's clock.
func (c *Controller) runCleanup(ctx context.Context) {
	t := c.clock.NewTicker(cleanupInterval)
	defer t.Stop()
	for {
		c.cleanup(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// requestChanged queues a request that has no status yet.
func (c *Controller) requestChanged(logger klog.Logger, obj any) {
	request, ok := obj.(*resourcev1alpha3.ResourcePoolStatusRequest)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Failed to cast object to ResourcePoolStatusRequest", "type", fmt.Sprintf("%T", obj))
		return
	}
	if request.Status == nil {
		c.queue.Add(request.Name)
	}
}
