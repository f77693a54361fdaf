package nodeipam

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity upstream's node-ipam-controller uses.
	ClientName = "node-controller"
	// eventComponent is the source of the Events, upstream's range
	// allocator's.
	eventComponent = "cidrAllocator"
	// queueName is the workqueue metrics name.
	queueName = "cidrallocator_node"
	// workers is upstream's number of concurrent Node updates.
	workers = 30
)

// Controller hands out pod CIDRs to Nodes.
type Controller struct {
	name   string
	client kubernetes.Interface
	alloc  *allocator

	nodeLister corelisters.NodeLister
	synced     cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	// recorder is set by Run (or a test) before any sync.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the node-ipam-controller.
// Without --allocate-node-cidrs there is nothing to do and it returns
// (nil, nil), as upstream.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	shared := cc.Config.KubeCloudShared
	if !shared.AllocateNodeCIDRs {
		return nil, nil
	}
	if err := CheckAllocatorType(shared.CIDRAllocatorType); err != nil {
		return nil, err
	}
	cfg, errs := ParseConfig(cc.Config)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.InformerFactory.Core().V1().Nodes(), cfg)
	if err != nil {
		return nil, fmt.Errorf("error creating node IPAM controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface,
	nodeInformer coreinformers.NodeInformer, cfg *Config) (*Controller, error) {
	alloc, err := newAllocator(cfg)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	for _, svc := range cfg.ServiceCIDRs {
		logger.V(2).Info("Reserving the service CIDR in the cluster CIDRs it overlaps", "serviceCIDR", svc)
	}
	c := &Controller{
		name:       name,
		client:     client,
		alloc:      alloc,
		nodeLister: nodeInformer.Lister(),
		queue:      controller.Queue(queueName),
	}
	reg, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.nodeUpdated,
		DeleteFunc: c.enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the Node cache, takes over the CIDRs the Nodes hold, then
// runs the workers until ctx is cancelled. It returns once they exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting range CIDR allocator")
	defer logger.Info("Shutting down range CIDR allocator")

	recorder, stop := controller.NewRecorder(ctx, c.client, eventComponent)
	defer stop()
	c.recorder = recorder

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
		c.queue.ShutDown()
		return
	}
	c.occupyExisting(ctx)
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncNode}
	w.Run(ctx, workers)
}

// occupyExisting marks the CIDRs of every cached Node as used before the
// first allocation, so that nothing is handed out twice after a restart.
// Upstream lists the Nodes from the API server for this; the synced cache
// holds the same.
func (c *Controller) occupyExisting(ctx context.Context) {
	logger := klog.FromContext(ctx)
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		// A cache lister does not fail.
		utilruntime.HandleErrorWithContext(ctx, err, "Listing cached Nodes")
		return
	}
	for _, node := range nodes {
		if len(node.Spec.PodCIDRs) == 0 {
			continue
		}
		logger.V(4).Info("Node has CIDR, occupying it in CIDR map", "node", klog.KObj(node), "podCIDRs", node.Spec.PodCIDRs)
		if _, err := c.alloc.observe(node); err != nil {
			logger.Error(err, "Node holds CIDRs that cannot be occupied; leaving them out", "node", klog.KObj(node))
		}
	}
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// nodeUpdated enqueues a Node that may need work: one without CIDRs, one
// whose CIDRs changed, or a new Node of the same name. Heartbeats and
// resyncs of Nodes that hold their CIDRs need none.
func (c *Controller) nodeUpdated(oldObj, newObj any) {
	oldNode, ok1 := oldObj.(*v1.Node)
	newNode, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if len(newNode.Spec.PodCIDRs) == 0 || oldNode.UID != newNode.UID ||
		!slices.Equal(oldNode.Spec.PodCIDRs, newNode.Spec.PodCIDRs) {
		c.queue.Add(newNode.Name)
	}
}

// enqueueWaiting enqueues the Nodes still without CIDRs: blocks became
// free, so the ones that found their cluster CIDR full can try again.
func (c *Controller) enqueueWaiting() {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, node := range nodes {
		if len(node.Spec.PodCIDRs) == 0 && node.DeletionTimestamp.IsZero() {
			c.queue.Add(node.Name)
		}
	}
}
