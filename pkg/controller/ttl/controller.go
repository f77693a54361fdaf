package ttl

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses.
	ClientName = "ttl-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "ttlcontroller"
	// workers is fixed to five, as upstream does.
	workers = 5
	// sweep is how long visiting every node after a change of the desired
	// TTL takes: the kubelet's default node status report period, within
	// which upstream's node updates re-annotate each node too.
	sweep = 5 * time.Minute
)

// Controller annotates nodes with the object TTL for the cluster's size.
type Controller struct {
	name   string
	client kubernetes.Interface
	size   sizer
	// sweep is the package constant, shorter in tests.
	sweep time.Duration

	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the ttl-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.InformerFactory.Core().V1().Nodes())
	if err != nil {
		return nil, fmt.Errorf("error creating TTL controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, nodeInformer coreinformers.NodeInformer) (*Controller, error) {
	c := &Controller{
		name:       name,
		client:     client,
		nodeLister: nodeInformer.Lister(),
		queue:      controller.Queue(queueName),
		sweep:      sweep,
	}
	logger := klog.FromContext(ctx)
	reg, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeAdded(logger, obj) },
		UpdateFunc: func(_, newObj any) { c.enqueue(newObj) },
		DeleteFunc: func(obj any) { c.nodeDeleted(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the workers until ctx is cancelled. It
// returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting TTL controller")
	defer logger.Info("Shutting down TTL controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

func (c *Controller) nodeAdded(logger klog.Logger, obj any) {
	if _, ok := obj.(*v1.Node); !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object type passed to addNode", "type", fmt.Sprintf("%T", obj))
		return
	}
	if c.size.add() {
		c.enqueueAll(logger)
	}
	c.enqueue(obj)
}

func (c *Controller) nodeDeleted(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if _, ok := obj.(*v1.Node); !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object type passed to deleteNode", "type", fmt.Sprintf("%T", obj))
		return
	}
	if c.size.remove() {
		c.enqueueAll(logger)
	}
}

// enqueueAll queues every cached node when the desired TTL changed,
// spread evenly over sweep. Upstream re-annotates a node only on that
// node's next update, which kubelets send at least every five minutes
// (their status report period) and kwok nodes may never send. kcm does
// the same, and also visits every node within that period, so that the
// annotation converges on every node. The sweep does not patch all the
// cluster's nodes at once. A node that updates before its turn is
// annotated then; its turn finds nothing to do.
func (c *Controller) enqueueAll(logger klog.Logger) {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Listing cached nodes")
		return
	}
	for i, n := range nodes {
		c.queue.AddAfter(n.Name, c.sweep*time.Duration(i)/time.Duration(len(nodes)))
	}
}

func (c *Controller) enqueue(obj any) {
	if n, ok := obj.(*v1.Node); ok {
		c.queue.Add(n.Name)
	}
}
