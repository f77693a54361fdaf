package resourcequota

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/resourcemonitor"
	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses.
	ClientName = "resourcequota-controller"
	// Upstream's workqueue metrics names.
	primaryQueueName  = "resourcequota_primary"
	priorityQueueName = "resourcequota_priority"
)

// Config is what newController needs; New fills it from the
// ControllerContext.
type Config struct {
	Name      string
	Client    kubernetes.Interface
	Discovery discovery.ServerResourcesInterface
	Informers informers.SharedInformerFactory
	Metadata  metadatainformer.SharedInformerFactory
	// Typed returns the typed informer of a resource another controller
	// already runs (ControllerContext.StartedTypedInformer); may be nil.
	Typed            func(schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
	InformersStarted <-chan struct{}
	Clock            clock.WithTicker
	Features         evaluator.Features
	// DynamicResourceAllocation measures ResourceClaims.
	DynamicResourceAllocation bool
	Workers                   int
	// ResyncPeriod is how often every quota is recalculated; 0 never.
	ResyncPeriod time.Duration
}

// Controller keeps ResourceQuota status up to date.
type Controller struct {
	name         string
	logger       klog.Logger
	client       kubernetes.Interface
	discovery    discovery.ServerResourcesInterface
	clock        clock.WithTicker
	features     evaluator.Features
	workers      int
	resyncPeriod time.Duration

	lister corelisters.ResourceQuotaLister
	synced []cache.InformerSynced
	// queue takes recalculations; priority takes quotas whose status
	// misses limits or usage. Each has its own workers.
	queue    workqueue.TypedRateLimitingInterface[string]
	priority workqueue.TypedRateLimitingInterface[string]

	registry *evaluator.Registry
	monitors *resourcemonitor.Monitors
	// extraInformers are typed informers evaluators read that the workers
	// do not wait for (ResourceClaims, DeviceClasses), by name.
	extraInformers map[string]cache.SharedIndexInformer
}

var (
	_ controllermanager.Controller        = (*Controller)(nil)
	_ controllermanager.ReadinessReporter = (*Controller)(nil)
)

// New is the controllermanager.Constructor of the
// resourcequota-controller: --concurrent-resource-quota-syncs workers per
// queue, a full recalculation every --resource-quota-sync-period.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	disco, err := cc.ClientBuilder.DiscoveryClient(ClientName)
	if err != nil {
		return nil, fmt.Errorf("failed to create the discovery client: %w", err)
	}
	cfg := cc.Config.ResourceQuotaController
	return newController(ctx, Config{
		Name:                      name,
		Client:                    client,
		Discovery:                 disco,
		Informers:                 cc.InformerFactory,
		Metadata:                  cc.MetadataInformerFactory,
		Typed:                     cc.StartedTypedInformer,
		InformersStarted:          cc.InformersStarted,
		Clock:                     cc.Clock,
		Features:                  evaluatorFeatures(cc.FeatureGate),
		DynamicResourceAllocation: features.Enabled(cc.FeatureGate, features.DynamicResourceAllocation),
		Workers:                   int(cfg.ConcurrentResourceQuotaSyncs),
		ResyncPeriod:              cfg.ResourceQuotaSyncPeriod.Duration,
	})
}

// evaluatorFeatures reads the gates upstream's evaluators consult.
func evaluatorFeatures(fg featuregate.FeatureGate) evaluator.Features {
	gate := func(f featuregate.Feature) bool { return features.Enabled(fg, f) }
	return evaluator.Features{
		PodLevelResources:                   gate(features.PodLevelResources),
		PodLevelResourcesFixKubeletQOSClass: gate(features.PodLevelResourcesFixKubeletQOSClass),
		InPlacePodVerticalScaling:           gate(features.InPlacePodVerticalScaling),
		VolumeAttributesClass:               gate(features.VolumeAttributesClass),
		RecoverVolumeExpansionFailure:       gate(features.RecoverVolumeExpansionFailure),
		DRAExtendedResource:                 gate(features.DRAExtendedResource),
	}
}

// newController registers the informers and handlers; it does no API I/O.
func newController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	quotas := cfg.Informers.Core().V1().ResourceQuotas()
	c := &Controller{
		name:           cfg.Name,
		logger:         klog.FromContext(ctx),
		client:         cfg.Client,
		discovery:      cfg.Discovery,
		clock:          clk,
		features:       cfg.Features,
		workers:        cfg.Workers,
		resyncPeriod:   cfg.ResyncPeriod,
		lister:         quotas.Lister(),
		queue:          controller.Queue(primaryQueueName),
		priority:       controller.Queue(priorityQueueName),
		extraInformers: map[string]cache.SharedIndexInformer{},
	}
	if _, err := quotas.Informer().AddEventHandler(c.quotaHandlers(klog.FromContext(ctx))); err != nil {
		return nil, fmt.Errorf("adding ResourceQuota event handler: %w", err)
	}
	c.synced = append(c.synced, quotas.Informer().HasSynced)
	registry, synced, err := c.coreEvaluators(cfg)
	if err != nil {
		return nil, err
	}
	c.registry = registry
	c.synced = append(c.synced, synced...)
	c.monitors = &resourcemonitor.Monitors{
		Factory:          cfg.Metadata,
		Typed:            cfg.Typed,
		Handler:          c.monitorHandler,
		Ignored:          ignoredResources,
		InformersStarted: cfg.InformersStarted,
	}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run discovers the resources to follow and starts their monitors, waits
// for the caches (at most discoveryPeriod for the monitors: a resource
// that cannot be listed does not hold back the others), runs the workers
// of both queues and the periodic full recalculation, and returns once
// every goroutine exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting resource quota controller")
	defer logger.Info("Shutting down resource quota controller")
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	defer c.priority.ShutDown()
	defer c.monitors.Stop()

	c.monitors.Start(ctx)
	if ctx.Err() != nil {
		return
	}
	old := c.syncResources(ctx, nil)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		return
	}
	syncCtx, cancel := context.WithTimeout(ctx, discoveryPeriod)
	if !c.monitors.WaitForSync(syncCtx) && ctx.Err() == nil {
		logger.Info("Resource quota controller: not all resource monitors could be synced, proceeding anyways", "unsynced", c.monitors.Unsynced())
	}
	cancel()
	wg.Go(func() { c.rediscover(ctx, old) })
	for _, q := range []workqueue.TypedRateLimitingInterface[string]{c.queue, c.priority} {
		w := controller.Workers{Name: c.name, Queue: q, Sync: c.sync}
		wg.Go(func() { w.Run(ctx, c.workers) })
	}
	if c.resyncPeriod > 0 {
		wg.Go(func() { c.resyncAll(ctx) })
	} else {
		logger.Info("periodic quota controller resync disabled")
	}
	<-ctx.Done()
}

// resyncAll queues every quota now and every resyncPeriod.
func (c *Controller) resyncAll(ctx context.Context) {
	ticker := c.clock.NewTicker(c.resyncPeriod)
	defer ticker.Stop()
	for {
		c.enqueueAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// ReadinessCheck fails, naming them, while some resources' informers have
// not synced (their usage is not measured until they do), or while
// discovery has found nothing to follow.
func (c *Controller) ReadinessCheck(*http.Request) error {
	u := c.monitors.Unsynced()
	if len(u) != 1 || u[0] != "no monitors" {
		u = c.unsynced()
	}
	if len(u) > 0 {
		return fmt.Errorf("resource quota monitors not synced: %s", strings.Join(u, ", "))
	}
	return nil
}

// unsynced lists, sorted, the monitors and extra informers that have not
// synced.
func (c *Controller) unsynced() []string {
	out := c.monitors.Unsynced()
	if len(out) == 1 && out[0] == "no monitors" {
		out = nil
	}
	for name, inf := range c.extraInformers {
		if !inf.HasSynced() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ignoredResources are never monitored nor counted: virtual resources
// and Events, as upstream.
var ignoredResources = map[schema.GroupResource]struct{}{
	{Group: "", Resource: "bindings"}:                                      {},
	{Group: "", Resource: "componentstatuses"}:                             {},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {},
	{Group: "", Resource: "events"}:                                        {},
	{Group: "events.k8s.io", Resource: "events"}:                           {},
}
