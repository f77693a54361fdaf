package storageversionmigrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	svminformers "k8s.io/client-go/informers/storagemigration/v1"
	"k8s.io/client-go/kubernetes"
	svmlisters "k8s.io/client-go/listers/storagemigration/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses, upstream's.
	ClientName = "storage-version-migrator-controller"
	// runnerFieldManager applies CRD status conditions, upstream's.
	runnerFieldManager = "migration-runner-controller"
	// rvQueueName is upstream's workqueue name of the resourceVersion loop
	// and, by upstream's oversight, of the runner loop too.
	rvQueueName = "resource-version-controller"
	// migrateWorkers is fixed, as upstream.
	migrateWorkers = 5
)

// Controller runs the storage version migrations.
type Controller struct {
	name      string
	client    kubernetes.Interface
	dynamic   dynamic.Interface
	metadata  metadata.Interface
	discovery discovery.ServerResourcesInterface
	mapper    meta.ResettableRESTMapper
	clock     clock.PassiveClock
	// gcIgnored are the resources the garbage collector does not monitor;
	// upstream reads the objects from the garbage collector's cache and so
	// cannot migrate them.
	gcIgnored map[schema.GroupResource]bool

	lister svmlisters.StorageVersionMigrationLister
	synced []cache.InformerSynced

	runnerQueue  workqueue.TypedRateLimitingInterface[string]
	rvQueue      workqueue.TypedRateLimitingInterface[string]
	migrateQueue workqueue.TypedRateLimitingInterface[string]

	resetMu   sync.Mutex
	lastReset time.Time
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// storage-version-migrator-controller. Like upstream it does not run unless
// the StorageVersionMigrator and InformerResourceVersion gates are on, and
// it refuses to start with the garbage collector disabled.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	if cc.FeatureGate == nil || !cc.FeatureGate.Enabled(features.StorageVersionMigrator) || !cc.FeatureGate.Enabled(features.InformerResourceVersion) {
		return nil, nil
	}
	if cc.Config == nil || !cc.Config.GarbageCollectorController.EnableGarbageCollector {
		return nil, errors.New("storage version migrator requires garbage collector")
	}
	// The migration makes many requests: its clients get 20 times the QPS
	// and 100 times the burst, as upstream's.
	cfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	cfg.QPS *= 20
	cfg.Burst *= 100
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create dynamic client for %s: %w", name, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create metadata client for %s: %w", name, err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create discovery client for %s: %w", name, err)
	}
	ignored := map[schema.GroupResource]bool{}
	for _, r := range cc.Config.GarbageCollectorController.GCIgnoredResources {
		ignored[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = true
	}
	return newController(name, client, dyn, meta, disco, cc.RESTMapper, cc.Clock, ignored,
		cc.InformerFactory.Storagemigration().V1().StorageVersionMigrations())
}

func newController(name string, client kubernetes.Interface, dyn dynamic.Interface, meta metadata.Interface,
	disco discovery.ServerResourcesInterface, mapper meta.ResettableRESTMapper, clk clock.PassiveClock,
	gcIgnored map[schema.GroupResource]bool, informer svminformers.StorageVersionMigrationInformer) (*Controller, error) {
	c := &Controller{
		name:         name,
		client:       client,
		dynamic:      dyn,
		metadata:     meta,
		discovery:    disco,
		mapper:       mapper,
		clock:        clk,
		gcIgnored:    gcIgnored,
		lister:       informer.Lister(),
		runnerQueue:  controller.Queue(rvQueueName),
		rvQueue:      controller.Queue(rvQueueName),
		migrateQueue: controller.Queue(name),
	}
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, newObj any) { c.enqueue(newObj) },
		// A deleted migration may unblock the next one of its resource.
		DeleteFunc: c.enqueueRunner,
	})
	if err != nil {
		return nil, fmt.Errorf("adding StorageVersionMigration event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the three loops until ctx is
// cancelled. It returns once all their workers have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting storage version migrator controller")
	defer logger.Info("Shutting down storage version migrator controller")
	loops := []struct {
		w controller.Workers
		n int
	}{
		{controller.Workers{Name: c.name + "/runner", Queue: c.runnerQueue, Sync: c.syncRunner, WaitFor: c.synced}, 1},
		{controller.Workers{Name: c.name + "/resourceversion", Queue: c.rvQueue, Sync: c.syncResourceVersion, WaitFor: c.synced}, 1},
		{controller.Workers{Name: c.name, Queue: c.migrateQueue, Sync: c.syncMigration, WaitFor: c.synced}, migrateWorkers},
	}
	var wg sync.WaitGroup
	for i := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loops[i].w.Run(ctx, loops[i].n)
		}()
	}
	wg.Wait()
}

func (c *Controller) enqueue(obj any) {
	svm, ok := obj.(*svmv1.StorageVersionMigration)
	if !ok {
		return
	}
	c.runnerQueue.Add(groupResourceKey(svm))
	c.rvQueue.Add(svm.Name)
	c.migrateQueue.Add(svm.Name)
}

func (c *Controller) enqueueRunner(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if svm, ok := obj.(*svmv1.StorageVersionMigration); ok {
		c.runnerQueue.Add(groupResourceKey(svm))
	}
}

// groupResourceKey is the runner's key: the migration's resource as
// "resource.group" (schema.ParseGroupResource's format).
func groupResourceKey(svm *svmv1.StorageVersionMigration) string {
	return schema.GroupResource{Group: svm.Spec.Resource.Group, Resource: svm.Spec.Resource.Resource}.String()
}

// resetMapperIfStale resets the RESTMapper at most every 10s, for
// resources not yet in discovery.
func (c *Controller) resetMapperIfStale() {
	c.resetMu.Lock()
	defer c.resetMu.Unlock()
	if now := c.clock.Now(); now.Sub(c.lastReset) > 10*time.Second {
		c.mapper.Reset()
		c.lastReset = now
	}
}

// resourceFor resolves a migration's group and resource to the preferred
// version's GroupVersionResource; ok is false when discovery does not know
// it.
func resourceFor(mapper meta.RESTMapper, gr schema.GroupResource) (gvr schema.GroupVersionResource, ok bool, err error) {
	gvrs, err := mapper.ResourcesFor(schema.GroupVersionResource{Group: gr.Group, Resource: gr.Resource})
	if meta.IsNoMatchError(err) {
		return gvr, false, nil
	}
	if err != nil {
		return gvr, false, err
	}
	for _, r := range gvrs {
		if r.Group == gr.Group && r.Resource == gr.Resource {
			return r, true, nil
		}
	}
	return gvr, false, nil
}
