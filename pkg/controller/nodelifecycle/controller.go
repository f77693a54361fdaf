package nodelifecycle

import (
	"context"
	"errors"
	"fmt"

	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coordinformers "k8s.io/client-go/informers/coordination/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses, as upstream.
	ClientName = "node-controller"
	// eventComponent is the source component of the controller's Events.
	eventComponent = "node-controller"
	// Workqueue metrics names (upstream's).
	nodeQueueName = "node_lifecycle_controller"
	podQueueName  = "node_lifecycle_controller_pods"
	// nodeWorkers and podWorkers are upstream's worker counts.
	nodeWorkers = 8
	podWorkers  = 4
	// taintingPeriod is how often the zones' taint queues are worked
	// (upstream's NodeEvictionPeriod).
	taintingPeriod = 100 * time.Millisecond
)

// Options are the controller's settings, from the NodeLifecycleController
// flags.
type Options struct {
	// MonitorPeriod is --node-monitor-period.
	MonitorPeriod time.Duration
	// StartupGracePeriod is --node-startup-grace-period.
	StartupGracePeriod time.Duration
	// MonitorGracePeriod is --node-monitor-grace-period.
	MonitorGracePeriod time.Duration
	// EvictionQPS is --node-eviction-rate.
	EvictionQPS float32
	// SecondaryEvictionQPS is --secondary-node-eviction-rate.
	SecondaryEvictionQPS float32
	// LargeClusterThreshold is --large-cluster-size-threshold.
	LargeClusterThreshold int32
	// UnhealthyZoneThreshold is --unhealthy-zone-threshold.
	UnhealthyZoneThreshold float32
	// LeaseCircuitBreaker is the NodeControllerLeaseCircuitBreaker gate.
	LeaseCircuitBreaker bool
}

// Controller watches node health and turns it into conditions, taints and
// pod readiness.
type Controller struct {
	name         string
	client       kubernetes.Interface
	clock        clock.WithTicker
	recorder     record.EventRecorder
	monitorEvery time.Duration
	healthPolicy healthPolicy
	eviction     evictionPolicy
	leaseGuard   *leaseGuard // nil unless the circuit breaker is on

	nodeLister  corelisters.NodeLister
	leaseLister coordlisters.LeaseLister
	podLister   corelisters.PodLister
	podIndexer  cache.Indexer
	synced      []cache.InformerSynced

	nodeQueue workqueue.TypedRateLimitingInterface[string]
	podQueue  workqueue.TypedRateLimitingInterface[string]

	health *healthMap
	zones  zones
	// podRetry holds the nodes whose pods could not all be marked not ready.
	podRetry sync.Map

	// Owned by the monitor goroutine.
	knownNodes map[string]*v1.Node
	zoneStates map[string]zoneState
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the node-lifecycle-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	cfg := cc.Config.NodeLifecycleController
	opts := Options{
		MonitorPeriod:          cfg.NodeMonitorPeriod.Duration,
		StartupGracePeriod:     cfg.NodeStartupGracePeriod.Duration,
		MonitorGracePeriod:     cfg.NodeMonitorGracePeriod.Duration,
		EvictionQPS:            cfg.NodeEvictionRate,
		SecondaryEvictionQPS:   cfg.SecondaryNodeEvictionRate,
		LargeClusterThreshold:  cfg.LargeClusterSizeThreshold,
		UnhealthyZoneThreshold: cfg.UnhealthyZoneThreshold,
		LeaseCircuitBreaker:    features.Enabled(cc.FeatureGate, features.NodeControllerLeaseCircuitBreaker),
	}
	clk := cc.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c, err := newController(ctx, name, client, clk, opts,
		cc.InformerFactory.Coordination().V1().Leases(),
		cc.InformerFactory.Core().V1().Pods(),
		cc.InformerFactory.Core().V1().Nodes())
	if err != nil {
		return nil, fmt.Errorf("error creating node lifecycle controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker, opts Options,
	leaseInformer coordinformers.LeaseInformer, podInformer coreinformers.PodInformer, nodeInformer coreinformers.NodeInformer) (*Controller, error) {
	if opts.MonitorPeriod <= 0 {
		return nil, errors.New("--node-monitor-period must be positive")
	}
	registerMetrics()
	c := &Controller{
		name:         name,
		client:       client,
		clock:        clk,
		monitorEvery: opts.MonitorPeriod,
		healthPolicy: healthPolicy{startupGracePeriod: opts.StartupGracePeriod, monitorGracePeriod: opts.MonitorGracePeriod},
		eviction: evictionPolicy{
			evictionQPS:            opts.EvictionQPS,
			secondaryEvictionQPS:   opts.SecondaryEvictionQPS,
			largeClusterThreshold:  opts.LargeClusterThreshold,
			unhealthyZoneThreshold: opts.UnhealthyZoneThreshold,
		},
		nodeLister:  nodeInformer.Lister(),
		leaseLister: leaseInformer.Lister(),
		podLister:   podInformer.Lister(),
		podIndexer:  podInformer.Informer().GetIndexer(),
		nodeQueue:   controller.Queue(nodeQueueName),
		podQueue:    controller.Queue(podQueueName),
		health:      newHealthMap(),
		zones:       newZones(),
		knownNodes:  map[string]*v1.Node{},
		zoneStates:  map[string]zoneState{},
	}
	if opts.LeaseCircuitBreaker {
		c.leaseGuard = &leaseGuard{client: client, store: leaseInformer.Informer().GetStore()}
	}
	if err := nodeutil.AddPodNodeNameIndexer(podInformer.Informer()); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	podReg, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podBound(nil, obj) },
		UpdateFunc: c.podBound,
	})
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	nodeReg, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNode,
		UpdateFunc: func(_, obj any) { c.enqueueNode(obj) },
		DeleteFunc: func(obj any) { c.nodeDeleted(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	leaseSynced := leaseInformer.Informer().HasSynced
	c.synced = []cache.InformerSynced{leaseSynced, nodeReg.HasSynced, podReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// now is the controller's clock, as an API time.
func (c *Controller) now() metav1.Time { return metav1.NewTime(c.clock.Now()) }

func (c *Controller) enqueueNode(obj any) {
	if node, ok := obj.(*v1.Node); ok {
		c.nodeQueue.Add(node.Name)
	}
}

// nodeDeleted forgets a deleted node's pending pod retries; the next
// monitor pass does the rest.
func (c *Controller) nodeDeleted(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	node, ok := obj.(*v1.Node)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Node delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.podRetry.Delete(node.Name)
}

// Run waits for the caches, then runs the node and pod workers, the health
// monitor and the tainting loop until ctx is cancelled. It returns once all
// of them have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, eventComponent)
		defer stop()
		c.recorder = recorder
	}
	logger.Info("Starting node controller")
	defer logger.Info("Shutting down node controller")

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		c.nodeQueue.ShutDown()
		c.podQueue.ShutDown()
		return
	}

	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	nodes := controller.Workers{Name: c.name, Queue: c.nodeQueue, Sync: c.syncNode}
	pods := controller.Workers{Name: c.name, Queue: c.podQueue, Sync: c.syncPod}
	run(func() { nodes.Run(ctx, nodeWorkers) })
	run(func() { pods.Run(ctx, podWorkers) })
	run(func() { c.taintLoop(ctx) })
	run(func() {
		c.every(ctx, c.monitorEvery, func(ctx context.Context) {
			if err := c.monitorNodeHealth(ctx); err != nil {
				logger.Error(err, "Error monitoring node health")
			}
		})
	})
	wg.Wait()
}

// taintLoop works the zones' taint queues every taintingPeriod, as
// upstream's does; a pass over empty queues changes nothing and takes no
// token from a zone's limiter.
func (c *Controller) taintLoop(ctx context.Context) {
	c.every(ctx, taintingPeriod, c.noExecuteTaintingPass)
}

// every runs f, then waits period after it returns, until ctx is done.
func (c *Controller) every(ctx context.Context, period time.Duration, f func(context.Context)) {
	for {
		f(ctx)
		if !c.sleep(ctx, period) {
			return
		}
	}
}

// sleep waits d on the controller's clock and reports whether it did, false
// if ctx ended first.
func (c *Controller) sleep(ctx context.Context, d time.Duration) bool {
	t := c.clock.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-t.C():
		return true
	}
}
