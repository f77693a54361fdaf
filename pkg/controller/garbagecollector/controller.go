package garbagecollector

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "k8s.io/controller-manager/controller"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/resourcemonitor"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses.
	ClientName = "generic-garbage-collector"
	// component is the source of upstream's Events.
	component = "garbage-collector-controller"
	// Each deletion takes two API calls upstream (a GET, then the DELETE),
	// so upstream doubles the QPS of the metadata client. kcm keeps the
	// doubled rate, the request rate operators size for; its deletions of
	// cached objects take one call (cached.go), so it deletes up to twice
	// as fast under the same rate.
	qpsFactor = 2
)

// resettableMapper is the RESTMapper the controller reads and resets after
// discovery changes.
type resettableMapper interface {
	meta.RESTMapper
	Reset()
}

// Controller is the garbage collector.
type Controller struct {
	name      string
	workers   int
	metadata  metadata.Interface
	discovery discovery.ServerResourcesInterface
	mapper    resettableMapper
	clock     clock.WithTicker
	builder   *builder
	monitors  *resourcemonitor.Monitors
	// store returns the synced informer store of a monitored resource
	// (monitorStore; tests replace it).
	store      func(schema.GroupResource) (cache.Store, bool)
	stopEvents func()
}

var (
	_ controllermanager.Controller        = (*Controller)(nil)
	_ ctrl.Debuggable                     = (*Controller)(nil)
	_ controllermanager.ReadinessReporter = (*Controller)(nil)
)

// New is the controllermanager.Constructor of the
// garbage-collector-controller. It returns nil when
// --enable-garbage-collector=false; --concurrent-gc-syncs sets the number
// of workers of each queue.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	cfg := cc.Config.GarbageCollectorController
	if !cfg.EnableGarbageCollector {
		return nil, nil
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	disco, err := cc.ClientBuilder.DiscoveryClient(ClientName)
	if err != nil {
		return nil, fmt.Errorf("failed to create the discovery client: %w", err)
	}
	restCfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	restCfg.QPS *= qpsFactor
	md, err := metadata.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("creating garbage collector metadata client: %w", err)
	}
	ignored := map[schema.GroupResource]struct{}{}
	for _, r := range cfg.GCIgnoredResources {
		ignored[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = struct{}{}
	}
	registerMetrics()
	recorder, stop := controller.NewRecorder(ctx, client, component)
	c := newController(name, int(cfg.ConcurrentGCSyncs), md, disco, cc.RESTMapper, cc.MetadataInformerFactory,
		ignored, cc.InformersStarted, recorder)
	c.stopEvents = stop
	c.monitors.Typed = cc.StartedTypedInformer
	if cc.Clock != nil {
		c.clock = cc.Clock
	}
	return c, nil
}

func newController(name string, workers int, md metadata.Interface, disco discovery.ServerResourcesInterface,
	mapper resettableMapper, factory metadatainformer.SharedInformerFactory, ignored map[schema.GroupResource]struct{},
	informersStarted <-chan struct{}, recorder record.EventRecorder) *Controller {
	b := newBuilder(recorder)
	// Each monitor feeds the graph builder the events of one resource,
	// tagged with its kind.
	handler := func(r schema.GroupVersionResource) (cache.ResourceEventHandler, error) {
		kind, err := mapper.KindFor(r)
		if err != nil {
			return nil, fmt.Errorf("couldn't look up resource %q: %w", r, err)
		}
		return b.handlers(kind), nil
	}
	c := &Controller{
		name:      name,
		workers:   workers,
		metadata:  md,
		discovery: disco,
		mapper:    mapper,
		clock:     clock.RealClock{},
		builder:   b,
		monitors: &resourcemonitor.Monitors{Factory: factory, Handler: handler, Ignored: ignored,
			InformersStarted: informersStarted},
	}
	c.store = c.monitorStore
	return c
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run starts the graph builder and rediscovery, waits up to 30s for the
// monitors (an unlistable resource does not hold the others back), runs
// the attemptToDelete and attemptToOrphan workers and returns once every
// goroutine exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", "garbagecollector")
	defer logger.Info("Shutting down controller", "controller", "garbagecollector")
	if c.stopEvents != nil {
		defer c.stopEvents()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.builder.run(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		c.builder.changes.ShutDown()
		c.monitors.Stop()
	})
	c.monitors.Start(ctx)
	wg.Go(func() { c.rediscover(ctx) })

	syncCtx, cancel := context.WithTimeout(ctx, resyncPeriod)
	if c.monitors.WaitForSync(syncCtx) {
		logger.Info("Garbage collector: all resource monitors have synced")
	} else if ctx.Err() == nil {
		logger.Info("Garbage collector: not all resource monitors could be synced, proceeding anyways")
	}
	cancel()
	logger.Info("Proceeding to collect garbage")
	deleters := controller.Workers{Name: c.name + "-attempt-to-delete", Queue: c.builder.attemptToDelete, Sync: c.attemptToDelete}
	orphaners := controller.Workers{Name: c.name + "-attempt-to-orphan", Queue: c.builder.attemptToOrphan, Sync: c.attemptToOrphan}
	wg.Go(func() { deleters.Run(ctx, c.workers) })
	wg.Go(func() { orphaners.Run(ctx, c.workers) })
}

// DebuggingHandler serves the dependency graph in DOT at /graph.
func (c *Controller) DebuggingHandler() http.Handler { return debugHandler{graph: c.builder.graph} }

// ReadinessCheck fails, naming them, while some resource monitors have not
// synced (a CRD with a broken conversion webhook, an unavailable aggregated
// API). It is served under /readyz only: collection of the other resources
// goes on, and a liveness probe on /healthz must not restart the process
// for a resource it cannot fix.
func (c *Controller) ReadinessCheck(*http.Request) error {
	if u := c.monitors.Unsynced(); len(u) > 0 {
		return fmt.Errorf("garbage collector monitors not synced: %s", strings.Join(u, ", "))
	}
	return nil
}
