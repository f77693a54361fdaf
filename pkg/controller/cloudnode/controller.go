package cloudnode

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for this controller (it
	// shares the node-controller's RBAC role).
	ClientName = "node-controller"
	// EventSource is the component of the Events.
	EventSource = "cloud-node-controller"
	// TaintUninitialized marks a node the cloud provider has not
	// initialized yet (k8s.io/cloud-provider/api.TaintExternalCloudProvider).
	TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"
	// AnnotationProvidedNodeIP is the node IP a kubelet with an external
	// cloud provider was given (api.AnnotationAlphaProvidedIPAddr).
	AnnotationProvidedNodeIP = "alpha.kubernetes.io/provided-node-ip"

	// defaultStatusUpdateFrequency is upstream's
	// --node-status-update-frequency default.
	defaultStatusUpdateFrequency = 5 * time.Minute
	// queueName is upstream's workqueue name.
	queueName = "Nodes"
)

// Controller initializes tainted nodes and keeps node addresses fresh.
type Controller struct {
	name          string
	client        kubernetes.Interface
	cloud         cloudprovider.Interface
	period        time.Duration
	workers       int
	statusWorkers int

	nodes  corelisters.NodeLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]

	// recorder is set by Run before any worker starts, unless a test did.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor. Without a provider, or one
// offering neither Instances nor InstancesV2, there is nothing to do
// (upstream logs and skips too).
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	if cc.Cloud == nil {
		return nil, nil
	}
	_, v1ok := cc.Cloud.Instances()
	_, v2ok := cc.Cloud.InstancesV2()
	if !v1ok && !v2ok {
		klog.FromContext(ctx).Info("failed to start cloud node controller: cloud provider does not support instances")
		return nil, nil
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	period, workers, statusWorkers := defaultStatusUpdateFrequency, 1, 0
	if cc.Config != nil {
		cfg := cc.Config.Cloud
		if cfg.NodeStatusUpdateFrequency.Duration > 0 {
			period = cfg.NodeStatusUpdateFrequency.Duration
		}
		if cfg.ConcurrentNodeSyncs > 0 {
			workers = int(cfg.ConcurrentNodeSyncs)
		}
		statusWorkers = int(cfg.ConcurrentNodeStatusUpdates)
	}
	if statusWorkers <= 0 {
		// Upstream: --concurrent-node-status-updates defaults to
		// --concurrent-node-syncs.
		statusWorkers = workers
	}
	return newController(name, client, cc.Cloud, cc.InformerFactory.Core().V1().Nodes(), period, workers, statusWorkers)
}

func newController(name string, client kubernetes.Interface, cloud cloudprovider.Interface,
	nodes coreinformers.NodeInformer, period time.Duration, workers, statusWorkers int) (*Controller, error) {
	if period <= 0 {
		return nil, fmt.Errorf("--node-status-update-frequency must be positive, got %s", period)
	}
	c := &Controller{
		name:          name,
		client:        client,
		cloud:         cloud,
		period:        period,
		workers:       workers,
		statusWorkers: statusWorkers,
		nodes:         nodes.Lister(),
		queue:         controller.Queue(queueName),
	}
	reg, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.onUpdate,
	})
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

func (c *Controller) enqueue(obj any) {
	if n, ok := obj.(*v1.Node); ok {
		c.queue.Add(n.Name)
	}
}

// onUpdate queues a node that still needs initializing, one whose labels
// changed (the beta/GA pairs may need reconciling) and every node at a
// resync; status-only updates of initialized nodes need nothing.
func (c *Controller) onUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.Node)
	cur, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if hasCloudTaint(cur) || old.ResourceVersion == cur.ResourceVersion || !labels.Equals(old.Labels, cur.Labels) {
		c.queue.Add(cur.Name)
	}
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the node cache, then initializes nodes and refreshes
// addresses until ctx is cancelled; it returns once its goroutines exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "controller", EventSource)
	defer logger.Info("Shutting down", "controller", EventSource)
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventSource)
		defer stop()
		c.recorder = recorder
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
			wait.UntilWithContext(ctx, c.updateAllAddresses, c.period)
		}
	}()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: []cache.InformerSynced{c.synced}}
	w.Run(ctx, c.workers)
	wg.Wait()
}

// updateAllAddresses is the periodic pass: the addresses of every
// initialized node are asked from the provider and patched if changed.
func (c *Controller) updateAllAddresses(ctx context.Context) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Listing nodes from the cache")
		return
	}
	workqueue.ParallelizeUntil(ctx, c.statusWorkers, len(nodes), func(i int) {
		node := nodes[i]
		if hasCloudTaint(node) {
			return // initialization sets them
		}
		md, err := c.instanceAddresses(ctx, node)
		if err != nil {
			logger.Error(err, "Getting the node's addresses from the cloud provider", "node", klog.KObj(node))
			return
		}
		c.updateAddresses(ctx, node, md)
	})
	logger.V(2).Info("Updated node addresses", "nodes", len(nodes), "duration", time.Since(start))
}
