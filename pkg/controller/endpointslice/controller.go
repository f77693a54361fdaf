package endpointslice

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
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
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity of the
	// endpointslice-controller.
	ClientName = "endpointslice-controller"
	// EventComponent is the source of its Events.
	EventComponent = "endpoint-slice-controller"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// slices it manages; slices of other managers are never touched.
	ManagedBy = "endpointslice-controller.k8s.io"

	queueName = "endpoint_slice"
	// maxRetries bounds the retries of one Service (1s, 2s, ... 1000s).
	maxRetries = 15
	// minSyncBackoff and maxSyncBackoff bound a Service's retry backoff:
	// upstream starts at 1s, not 5ms, since a sync may write many slices.
	minSyncBackoff = time.Second
	maxSyncBackoff = 1000 * time.Second
	// sliceChangeMinDelay is the least delay of a sync caused by a change
	// to a slice, so that changes to several slices are handled together.
	sliceChangeMinDelay = time.Second
	// WriteSpacing is the least time between two writes of one Service's
	// slices caused by pod changes, when no batch period is set
	// (endpointutil.WriteSpacing).
	WriteSpacing = endpointutil.WriteSpacing
	// topologyKey is the one key of the topology queue.
	topologyKey = "topologyQueueItemKey"
)

// Config is what NewController needs.
type Config struct {
	Name                 string
	Client               kubernetes.Interface
	Pods                 coreinformers.PodInformer
	Services             coreinformers.ServiceInformer
	Nodes                coreinformers.NodeInformer
	Slices               discoveryinformers.EndpointSliceInformer
	Workers              int
	MaxEndpointsPerSlice int32
	// BatchPeriod delays the syncs that pod changes cause.
	BatchPeriod time.Duration
	// WriteSpacing, when BatchPeriod is 0, holds back a pod-caused sync of
	// a Service whose slices were written less than this long ago until
	// then (0: never; New sets WriteSpacing).
	WriteSpacing time.Duration
	// PreferSameTrafficDistribution accepts PreferSameZone and
	// PreferSameNode.
	PreferSameTrafficDistribution bool
	// Recorder replaces the Event recorder Run builds (tests).
	Recorder record.EventRecorder
}

// Controller keeps an EndpointSlice set per selector-based Service.
type Controller struct {
	name    string
	client  kubernetes.Interface
	workers int
	batch   time.Duration

	services     corelisters.ServiceLister
	serviceIndex cache.Indexer
	podIndex     cache.Indexer
	sliceIndex   cache.Indexer
	nodes        corelisters.NodeLister
	synced       []cache.InformerSynced

	queue         workqueue.TypedRateLimitingInterface[string]
	topologyQueue workqueue.TypedRateLimitingInterface[string]
	// spacer spaces the pod-caused syncs of a Service that just wrote.
	spacer *controller.Spacer

	tracker     *endpointutil.SliceTracker
	triggerTime *endpointutil.TriggerTimeTracker
	reconciler  *reconciler
	recorder    record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the endpointslice-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	cfg := cc.Config.EndpointSliceController
	c, err := NewController(ctx, Config{
		Name:                          name,
		Client:                        client,
		Pods:                          cc.InformerFactory.Core().V1().Pods(),
		Services:                      cc.InformerFactory.Core().V1().Services(),
		Nodes:                         cc.InformerFactory.Core().V1().Nodes(),
		Slices:                        cc.InformerFactory.Discovery().V1().EndpointSlices(),
		Workers:                       int(cfg.ConcurrentServiceEndpointSyncs),
		MaxEndpointsPerSlice:          cfg.MaxEndpointsPerSlice,
		BatchPeriod:                   cfg.EndpointUpdatesBatchPeriod.Duration,
		WriteSpacing:                  cc.Paced(WriteSpacing),
		PreferSameTrafficDistribution: features.Enabled(cc.FeatureGate, features.PreferSameTrafficDistribution),
	})
	if err != nil {
		return nil, fmt.Errorf("error creating EndpointSlice controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller and registers its informer handlers
// and indexes. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	if cfg.MaxEndpointsPerSlice <= 0 {
		cfg.MaxEndpointsPerSlice = 100
	}
	registerMetrics()
	svcInformer, podInformer := cfg.Services.Informer(), cfg.Pods.Informer()
	sliceInformer, nodeInformer := cfg.Slices.Informer(), cfg.Nodes.Informer()
	if err := endpointutil.AddServiceSelectorIndex(svcInformer); err != nil {
		return nil, err
	}
	if err := labelindex.Add(podInformer); err != nil {
		return nil, err
	}
	if err := endpointutil.AddSliceServiceIndex(sliceInformer); err != nil {
		return nil, err
	}
	c := &Controller{
		name:          cfg.Name,
		client:        cfg.Client,
		workers:       cfg.Workers,
		batch:         cfg.BatchPeriod,
		services:      cfg.Services.Lister(),
		serviceIndex:  svcInformer.GetIndexer(),
		podIndex:      podInformer.GetIndexer(),
		sliceIndex:    sliceInformer.GetIndexer(),
		nodes:         cfg.Nodes.Lister(),
		queue:         newServiceQueue(),
		topologyQueue: controller.Queue(""),
		spacer:        endpointutil.NewWriteSpacer(cfg.BatchPeriod, cfg.WriteSpacing),
		tracker:       endpointutil.NewSliceTracker(),
		triggerTime:   endpointutil.NewTriggerTimeTracker(),
		recorder:      cfg.Recorder,
	}
	c.reconciler = &reconciler{
		client:               cfg.Client,
		nodes:                c.nodes,
		maxEndpointsPerSlice: cfg.MaxEndpointsPerSlice,
		tracker:              c.tracker,
		topology:             newTopologyCache(),
		metrics:              newMetricsCache(cfg.MaxEndpointsPerSlice),
		recorder:             cfg.Recorder,
		manager:              ManagedBy,
		preferSame:           cfg.PreferSameTrafficDistribution,
		spacer:               c.spacer,
	}
	if err := c.addHandlers(klog.FromContext(ctx), svcInformer, podInformer, sliceInformer, nodeInformer); err != nil {
		return nil, err
	}
	return c, nil
}

// newServiceQueue is upstream's: per-Service backoff from 1s to 1000s and
// an overall token bucket of 10 qps, burst 100.
func newServiceQueue() workqueue.TypedRateLimitingInterface[string] {
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

// Run waits for the caches, then syncs Services with the configured
// number of workers and the node topology with one, until ctx is
// cancelled. It returns once every worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting endpoint slice controller")
	defer logger.Info("Shutting down endpoint slice controller")
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventComponent)
		defer stop()
		c.recorder = recorder
		c.reconciler.recorder = recorder
	}
	// The zones' shares are known before the first Service sync: upstream
	// computes them in the topology worker only, racing its Service
	// workers, so a Service synced first (after every restart, typically)
	// loses its hints until its next change.
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	_ = c.syncTopology(ctx, topologyKey)
	services := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, MaxRetries: maxRetries}
	topology := controller.Workers{Name: c.name + "-topology", Queue: c.topologyQueue, Sync: c.syncTopology, MaxRetries: maxRetries}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		topology.Run(ctx, 1)
	}()
	services.Run(ctx, c.workers)
	wg.Wait()
}

// syncTopology recomputes the zones' CPU shares from the cached nodes and
// queues the Services whose hints overload a zone.
func (c *Controller) syncTopology(ctx context.Context, _ string) error {
	logger := klog.FromContext(ctx)
	nodes, err := c.nodes.List(everything)
	if err != nil {
		logger.Error(err, "Error listing Nodes")
		return nil
	}
	c.reconciler.topology.setNodes(logger, nodes)
	for _, key := range c.reconciler.topology.overloadedServices() {
		logger.V(2).Info("Queuing Service after Node change due to overloading", "key", key)
		c.queue.Add(key)
	}
	return nil
}

// nodeReadyOrZoneChanged reports whether a node update matters to the
// topology: its readiness or its zone label changed.
func nodeReadyOrZoneChanged(oldNode, newNode *v1.Node) bool {
	return nodeReady(oldNode) != nodeReady(newNode) ||
		oldNode.Labels[v1.LabelTopologyZone] != newNode.Labels[v1.LabelTopologyZone]
}
