package devicetainteviction

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is upstream's client identity for the controller: the
	// controller's own name, whose ClusterRole
	// system:controller:device-taint-eviction-controller the apiserver's
	// bootstrap RBAC grants.
	ClientName = "device-taint-eviction-controller"

	// ruleStatusPeriod is the shortest time between two updates of a
	// DeviceTaintRule's status while its eviction is in progress
	// (upstream's).
	ruleStatusPeriod = 10 * time.Second

	// evictedCacheSize bounds the UIDs of pods already evicted
	// (upstream's maxUIDCacheEntries).
	evictedCacheSize = 500

	// Work item prefixes: a pod to decide on (and evict when due), or a
	// DeviceTaintRule whose status may need an update.
	podKeyPrefix  = "pod:"
	ruleKeyPrefix = "rule:"
)

// Features are the gates the controller reads once, at construction.
type Features struct {
	// DeviceTaintRules (DRADeviceTaintRules, on by default in v1.37):
	// DeviceTaintRules taint devices and get status conditions.
	DeviceTaintRules bool
	// WorkloadResourceClaims (DRAWorkloadResourceClaims, off by default):
	// a claim may be reserved for a PodGroup, whose pods then use it.
	WorkloadResourceClaims bool
}

// Config holds what the controller is built from.
type Config struct {
	Name     string
	Client   kubernetes.Interface
	Clock    clock.WithTicker
	Pods     coreinformers.PodInformer
	Claims   resourceinformers.ResourceClaimInformer
	Slices   resourceinformers.ResourceSliceInformer
	Rules    resourceinformers.DeviceTaintRuleInformer // used only under Features.DeviceTaintRules
	Features Features
	Workers  int
}

// Controller evicts pods whose allocated devices carry NoExecute taints
// their claims do not tolerate, and reports in DeviceTaintRules' status
// how their eviction is going.
type Controller struct {
	name     string
	client   kubernetes.Interface
	clock    clock.PassiveClock
	features Features
	workers  int

	pods         corelisters.PodLister
	podIndexer   cache.Indexer
	claims       resourcelisters.ResourceClaimLister
	claimIndexer cache.Indexer
	sliceIndexer cache.Indexer
	rules        resourcelisters.DeviceTaintRuleLister // nil without Features.DeviceTaintRules
	synced       []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]

	// recorder is set by Run before any worker starts.
	recorder record.EventRecorder

	// mu guards the fields below, all in-memory bookkeeping of work
	// already done; the decisions themselves come from the listers.
	mu sync.Mutex
	// pending holds the evictions decided and not yet done, by pod key:
	// a pending eviction that becomes unnecessary is cancelled with an
	// Event.
	pending map[string]pendingEviction
	// evicted remembers the UIDs of pods this controller evicted, which
	// are not looked at again while they terminate.
	evicted *lru.Cache
	// ruleEvictions counts, per DeviceTaintRule UID, the pods evicted
	// because of that rule since the controller started; the rule's
	// status reports it.
	ruleEvictions map[types.UID]int64
}

// pendingEviction is a pod's eviction that is scheduled and not done.
type pendingEviction struct {
	uid  types.UID
	when time.Time
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// device-taint-eviction-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	resource := cc.InformerFactory.Resource().V1()
	c, err := NewController(ctx, Config{
		Name:   name,
		Client: client,
		Clock:  cc.Clock,
		Pods:   cc.InformerFactory.Core().V1().Pods(),
		Claims: resource.ResourceClaims(),
		Slices: resource.ResourceSlices(),
		Rules:  resource.DeviceTaintRules(),
		Features: Features{
			DeviceTaintRules:       features.Enabled(cc.FeatureGate, features.DRADeviceTaintRules),
			WorkloadResourceClaims: features.Enabled(cc.FeatureGate, features.DRAWorkloadResourceClaims),
		},
		Workers: int(cc.Config.DeviceTaintEvictionController.ConcurrentSyncs),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to init device taint eviction controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	podInformer := cfg.Pods.Informer()
	claimInformer := cfg.Claims.Informer()
	sliceInformer := cfg.Slices.Informer()
	c := &Controller{
		name:         cfg.Name,
		client:       cfg.Client,
		clock:        clk,
		features:     cfg.Features,
		workers:      cfg.Workers,
		pods:         cfg.Pods.Lister(),
		podIndexer:   podInformer.GetIndexer(),
		claims:       cfg.Claims.Lister(),
		claimIndexer: claimInformer.GetIndexer(),
		sliceIndexer: sliceInformer.GetIndexer(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: cfg.Name, Clock: controller.QueueClock(clk)}),
		pending:       map[string]pendingEviction{},
		evicted:       lru.New(evictedCacheSize),
		ruleEvictions: map[types.UID]int64{},
	}
	if err := addIndexers(podInformer, claimInformer, sliceInformer, cfg.Features.WorkloadResourceClaims); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	if err != nil {
		return nil, fmt.Errorf("adding pod event handler: %w", err)
	}
	claimReg, err := claimInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.claimChanged(logger, nil, obj) },
		UpdateFunc: func(old, obj any) { c.claimChanged(logger, old, obj) },
		DeleteFunc: func(obj any) { c.claimChanged(logger, objectOf(obj), nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding claim event handler: %w", err)
	}
	sliceReg, err := sliceInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.sliceChanged(logger, nil, obj) },
		UpdateFunc: func(old, obj any) { c.sliceChanged(logger, old, obj) },
		DeleteFunc: func(obj any) { c.sliceChanged(logger, objectOf(obj), nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding slice event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, claimReg.HasSynced, sliceReg.HasSynced}
	if cfg.Features.DeviceTaintRules {
		c.rules = cfg.Rules.Lister()
		ruleReg, err := cfg.Rules.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.ruleChanged(logger, nil, obj) },
			UpdateFunc: func(old, obj any) { c.ruleChanged(logger, old, obj) },
			DeleteFunc: func(obj any) { c.ruleChanged(logger, objectOf(obj), nil) },
		})
		if err != nil {
			return nil, fmt.Errorf("adding DeviceTaintRule event handler: %w", err)
		}
		c.synced = append(c.synced, ruleReg.HasSynced)
	}
	registerMetrics()
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then processes work items until ctx is
// cancelled, and returns once the workers have exited. Pending evictions
// are dropped; the next leader decides again from the API's state.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "controller", c.name, "numWorkers", c.workers)
	defer logger.Info("Shut down controller", "controller", c.name)
	recorder, stop := controller.NewRecorder(ctx, c.client, c.name)
	defer stop()
	c.recorder = recorder
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// sync dispatches a work item by its prefix.
func (c *Controller) sync(ctx context.Context, key string) error {
	switch {
	case strings.HasPrefix(key, podKeyPrefix):
		namespace, name, err := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, podKeyPrefix))
		if err != nil {
			return controller.Permanent(err)
		}
		return c.syncPod(ctx, namespace, name)
	case strings.HasPrefix(key, ruleKeyPrefix):
		return c.syncRuleStatus(ctx, strings.TrimPrefix(key, ruleKeyPrefix))
	}
	return controller.Permanent(fmt.Errorf("unexpected key %q", key))
}

// enqueuePod adds a pod's work item.
func (c *Controller) enqueuePod(namespace, name string) {
	c.queue.Add(podKeyPrefix + namespace + "/" + name)
}

// enqueueRule adds a DeviceTaintRule's status work item after delay.
func (c *Controller) enqueueRule(name string, delay time.Duration) {
	c.queue.AddAfter(ruleKeyPrefix+name, delay)
}

// objectOf unwraps a deletion tombstone.
func objectOf(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
