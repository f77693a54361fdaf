package endpointslicemirroring

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ControllerName is the value of the endpointslice.kubernetes.io/managed-by
	// label on the slices this controller manages.
	ControllerName = "endpointslicemirroring-controller.k8s.io"
	// ClientName is the client (and ServiceAccount) identity.
	ClientName = "endpointslicemirroring-controller"
	// EventComponent is the source of the Events it records.
	EventComponent = "endpoint-slice-mirroring-controller"

	queueName = "endpoint_slice_mirroring"
	// maxRetries bounds the retries of one Endpoints key: with the backoff
	// below (1s doubling to 100s) about 17 minutes, then the key is dropped
	// until the next change.
	maxRetries     = 15
	minSyncBackoff = time.Second
	maxSyncBackoff = 100 * time.Second
)

// Config is what newController needs besides the informers.
type Config struct {
	// MaxEndpointsPerSubset bounds the addresses mirrored per subset (and
	// so per slice).
	MaxEndpointsPerSubset int32
	// BatchPeriod delays syncs caused by EndpointSlice changes.
	BatchPeriod time.Duration
	// Workers is the number of concurrent syncs.
	Workers int
}

// Controller mirrors custom Endpoints into EndpointSlices.
type Controller struct {
	name   string
	client kubernetes.Interface
	cfg    Config

	endpointsLister corelisters.EndpointsLister
	sliceIndexer    cache.Indexer
	serviceLister   corelisters.ServiceLister
	synced          []cache.InformerSynced

	queue   workqueue.TypedRateLimitingInterface[string]
	tracker *endpointutil.SliceTracker
	metrics *metricsCache

	// recorder is set by Run before any worker starts, unless a test did.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// endpointslice-mirroring-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	o := cc.Config.EndpointSliceMirroringController
	c, err := newController(ctx, name, client,
		cc.InformerFactory.Core().V1().Endpoints(),
		cc.InformerFactory.Discovery().V1().EndpointSlices(),
		cc.InformerFactory.Core().V1().Services(),
		Config{
			MaxEndpointsPerSubset: o.MirroringMaxEndpointsPerSubset,
			BatchPeriod:           o.MirroringEndpointUpdatesBatchPeriod.Duration,
			Workers:               int(o.MirroringConcurrentServiceEndpointSyncs),
		})
	if err != nil {
		return nil, fmt.Errorf("error creating EndpointSliceMirroring controller: %w", err)
	}
	registerMetrics()
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface,
	endpoints coreinformers.EndpointsInformer, slices discoveryinformers.EndpointSliceInformer,
	services coreinformers.ServiceInformer, cfg Config) (*Controller, error) {
	c := &Controller{
		name:            name,
		client:          client,
		cfg:             cfg,
		endpointsLister: endpoints.Lister(),
		sliceIndexer:    slices.Informer().GetIndexer(),
		serviceLister:   services.Lister(),
		queue:           newQueue(),
		tracker:         endpointutil.NewSliceTracker(),
		metrics:         newMetricsCache(),
	}
	if err := endpointutil.AddSliceServiceIndex(slices.Informer()); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	epReg, err := endpoints.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onEndpointsAdd(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.onEndpointsUpdate(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.onEndpointsDelete(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Endpoints event handler: %w", err)
	}
	sliceReg, err := slices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onSliceAdd(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.onSliceUpdate(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.onSliceDelete(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding EndpointSlice event handler: %w", err)
	}
	svcReg, err := services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onServiceAdd(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.onServiceUpdate(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.onServiceDelete(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Service event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{epReg.HasSynced, sliceReg.HasSynced, svcReg.HasSynced}
	return c, nil
}

// newQueue is upstream's: per-key backoff from 1s (not the usual 5ms: a
// sync may rewrite many slices) up to 100s, and an overall token bucket of
// 10 qps with a burst of 100.
func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedMaxOfRateLimiter[string](
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](minSyncBackoff, maxSyncBackoff),
			&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
		),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(nil)},
	)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the workers until ctx is cancelled.
// It returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting EndpointSliceMirroring controller")
	defer logger.Info("Shutting down EndpointSliceMirroring controller")

	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventComponent)
		defer stop()
		c.recorder = recorder
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncEndpoints, MaxRetries: maxRetries, WaitFor: c.synced}
	w.Run(ctx, c.cfg.Workers)
}
