package disruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity of the
	// disruption-controller.
	ClientName = "disruption-controller"
	// eventComponent is the source of its Events: upstream's, the
	// controller manager's generic name.
	eventComponent = "controllermanager"

	// DeletionTimeout is how long a pod stays in a budget's disruptedPods
	// (and is not counted healthy) after the eviction API admitted its
	// eviction, waiting for the controller to see it being deleted.
	DeletionTimeout = 2 * time.Minute
	// stalePodDisruptionTimeout is how long a pod may carry a True
	// DisruptionTarget condition without being deleted before the
	// condition is set to False.
	stalePodDisruptionTimeout = 2 * time.Minute

	// Workqueue metrics names, upstream's.
	queueName      = "disruption"
	staleQueueName = "stale_pod_disruption"
)

// Config is what NewController needs. Tests fill it with fakes.
type Config struct {
	// Name is the controller's canonical name.
	Name   string
	Client kubernetes.Interface
	// Informers provides the pod, budget and workload informers.
	Informers informers.SharedInformerFactory
	// Mapper, Scales and Discovery serve the scale finder (any kind that
	// implements the scale subresource).
	Mapper    meta.RESTMapper
	Scales    scale.ScalesGetter
	Discovery discovery.ServerResourcesInterface
	// Clock defaults to the real clock.
	Clock   clock.WithTicker
	Workers int
	// StaleTimeout defaults to stalePodDisruptionTimeout.
	StaleTimeout time.Duration
	// ObservedGeneration sets a cleared DisruptionTarget condition's
	// observedGeneration to the pod's generation
	// (PodObservedGenerationTracking); without it only where the
	// condition already had one.
	ObservedGeneration bool
}

// Controller keeps PodDisruptionBudget status.
type Controller struct {
	name         string
	client       kubernetes.Interface
	clock        clock.WithTicker
	workers      int
	staleTimeout time.Duration
	observedGen  bool

	pdbs        policylisters.PodDisruptionBudgetLister
	pdbIndexer  cache.Indexer
	podIndexer  cache.Indexer
	pods        corelisters.PodLister
	rcs         corelisters.ReplicationControllerLister
	rss         appslisters.ReplicaSetLister
	deployments appslisters.DeploymentLister
	sets        appslisters.StatefulSetLister

	mapper    meta.RESTMapper
	scales    scale.ScalesGetter
	discovery discovery.ServerResourcesInterface

	synced []cache.InformerSynced
	// queue holds budget keys, staleQueue pod keys.
	queue      workqueue.TypedRateLimitingInterface[string]
	staleQueue workqueue.TypedRateLimitingInterface[string]

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the disruption-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	cfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	// Built as upstream builds it: resources from the shared REST mapper,
	// the Scale kind each serves from discovery.
	scales, err := scale.NewForConfig(cfg, cc.RESTMapper,
		dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(client.Discovery()))
	if err != nil {
		return nil, fmt.Errorf("error creating the disruption controller's scale client: %w", err)
	}
	return NewController(ctx, Config{
		Name:               name,
		Client:             client,
		Informers:          cc.InformerFactory,
		Mapper:             cc.RESTMapper,
		Scales:             scales,
		Discovery:          client.Discovery(),
		Clock:              cc.Clock,
		Workers:            int(cc.Config.DisruptionController.ConcurrentDisruptionSyncs),
		ObservedGeneration: features.Enabled(cc.FeatureGate, features.PodObservedGenerationTracking),
	})
}

// NewController registers the controller's informer handlers and indexes.
// It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	staleTimeout := cfg.StaleTimeout
	if staleTimeout == 0 {
		staleTimeout = stalePodDisruptionTimeout
	}
	f := cfg.Informers
	podInformer := f.Core().V1().Pods().Informer()
	pdbInformer := f.Policy().V1().PodDisruptionBudgets().Informer()
	if err := labelindex.Add(podInformer); err != nil {
		return nil, err
	}
	if err := addSelectorIndex(pdbInformer); err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	c := &Controller{
		name:         cfg.Name,
		client:       cfg.Client,
		clock:        clk,
		workers:      cfg.Workers,
		staleTimeout: staleTimeout,
		observedGen:  cfg.ObservedGeneration,
		pdbs:         f.Policy().V1().PodDisruptionBudgets().Lister(),
		pdbIndexer:   pdbInformer.GetIndexer(),
		podIndexer:   podInformer.GetIndexer(),
		pods:         f.Core().V1().Pods().Lister(),
		rcs:          f.Core().V1().ReplicationControllers().Lister(),
		rss:          f.Apps().V1().ReplicaSets().Lister(),
		deployments:  f.Apps().V1().Deployments().Lister(),
		sets:         f.Apps().V1().StatefulSets().Lister(),
		mapper:       cfg.Mapper,
		scales:       cfg.Scales,
		discovery:    cfg.Discovery,
		queue:        newQueue(queueName, clk),
		staleQueue:   newQueue(staleQueueName, clk),
		broadcaster:  broadcaster,
		recorder:     broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent}),
	}
	if err := c.addHandlers(klog.FromContext(ctx), f); err != nil {
		return nil, err
	}
	return c, nil
}

// newQueue is controller.Queue on the controller's clock, so that the
// delays of rechecks and stale conditions follow an injected clock.
func newQueue(name string, clk clock.WithTicker) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: controller.QueueClock(clk)},
	)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs budgets with the configured number
// of workers and clears stale pod conditions with one more, until ctx is
// cancelled. It returns once every worker exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting disruption controller")
	defer logger.Info("Shutting down disruption controller")

	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	defer c.broadcaster.Shutdown()

	budgets := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	stale := controller.Workers{Name: c.name, Queue: c.staleQueue, Sync: c.syncStalePod, WaitFor: c.synced}
	var wg sync.WaitGroup
	wg.Go(func() { budgets.Run(ctx, c.workers) })
	wg.Go(func() { stale.Run(ctx, 1) })
	wg.Wait()
}
