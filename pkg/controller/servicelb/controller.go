package servicelb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
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
	// ClientName is upstream's client (and ServiceAccount) identity.
	ClientName = "service-controller"
	// EventSource is the component upstream's Events carry.
	EventSource = "service-controller"

	// serviceResync and nodeResync are upstream's handler resync periods.
	serviceResync = 30 * time.Second
	nodeResync    = 100 * time.Second
	// Upstream's per-Service retry delays.
	minRetryDelay = 5 * time.Second
	maxRetryDelay = 300 * time.Second
	// nodesKey is the one key node events queue.
	nodesKey = "nodes"
)

// Controller reconciles LoadBalancer Services with the cloud provider.
type Controller struct {
	name        string
	client      kubernetes.Interface
	balancer    cloudprovider.LoadBalancer
	clusterName string
	workers     int

	services   corelisters.ServiceLister
	nodes      corelisters.NodeLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	nodesQueue workqueue.TypedRateLimitingInterface[string]

	// mu guards known and lastNodes.
	mu sync.Mutex
	// known is the last state of each Service this controller acted on,
	// by key: the node pass updates these, and a Service that disappeared
	// without the finalizer is cleaned up from it.
	known map[string]*v1.Service
	// lastNodes is the node set each Service's load balancer last got.
	lastNodes map[string][]*v1.Node

	// recorder is set by Run before any worker starts, unless a test did.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the service-lb-controller.
// Without a cloud provider, or one without load balancers, it has nothing
// to do (upstream logs and skips it too).
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	if cc.Cloud == nil {
		return nil, nil
	}
	balancer, ok := cc.Cloud.LoadBalancer()
	if !ok {
		klog.FromContext(ctx).Info("The cloud provider does not support external load balancers", "provider", cc.Cloud.ProviderName())
		return nil, nil
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	var clusterName string
	workers := 1 // upstream's --concurrent-service-syncs default
	if cc.Config != nil {
		clusterName = cc.Config.KubeCloudShared.ClusterName
		if n := cc.Config.Cloud.ConcurrentServiceSyncs; n > 0 {
			workers = int(n)
		}
	}
	return newController(name, client, balancer, clusterName, workers,
		cc.InformerFactory.Core().V1().Services(), cc.InformerFactory.Core().V1().Nodes())
}

func newController(name string, client kubernetes.Interface, balancer cloudprovider.LoadBalancer, clusterName string, workers int,
	services coreinformers.ServiceInformer, nodes coreinformers.NodeInformer) (*Controller, error) {
	c := &Controller{
		name:        name,
		client:      client,
		balancer:    balancer,
		clusterName: clusterName,
		workers:     workers,
		services:    services.Lister(),
		nodes:       nodes.Lister(),
		queue:       retryQueue("service"),
		nodesQueue:  retryQueue("node"),
		known:       map[string]*v1.Service{},
		lastNodes:   map[string][]*v1.Node{},
	}
	svcReg, err := services.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.onServiceAdd,
		UpdateFunc: c.onServiceUpdate,
	}, serviceResync)
	if err != nil {
		return nil, fmt.Errorf("adding Service event handler: %w", err)
	}
	nodeReg, err := nodes.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.nodesQueue.Add(nodesKey) },
		UpdateFunc: c.onNodeUpdate,
		DeleteFunc: func(any) { c.nodesQueue.Add(nodesKey) },
	}, nodeResync)
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{svcReg.HasSynced, nodeReg.HasSynced}
	return c, nil
}

func retryQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](minRetryDelay, maxRetryDelay),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: controller.QueueClock(nil)},
	)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the Service workers and the node
// worker until ctx is cancelled. It returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting service controller")
	defer logger.Info("Shutting down service controller")

	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventSource)
		defer stop()
		c.recorder = recorder
	}
	services := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncWithRetryAfter, WaitFor: c.synced}
	nodes := controller.Workers{Name: c.name + "-nodes", Queue: c.nodesQueue, Sync: c.syncNodes, WaitFor: c.synced}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); services.Run(ctx, c.workers) }()
	go func() { defer wg.Done(); nodes.Run(ctx, 1) }()
	wg.Wait()
}

// retryAfter is a provider's request to retry after a given delay
// (k8s.io/cloud-provider/api.RetryError), matched by its method.
type retryAfter interface {
	error
	RetryAfter() time.Duration
}

// syncWithRetryAfter honours a provider's RetryError: the Service is
// synced again after the delay it names instead of the backoff.
func (c *Controller) syncWithRetryAfter(ctx context.Context, key string) error {
	err := c.sync(ctx, key)
	var ra retryAfter
	if errors.As(err, &ra) {
		klog.FromContext(ctx).Info("Error processing service, retrying", "service", key, "retryAfter", ra.RetryAfter(), "err", err)
		c.queue.AddAfter(key, ra.RetryAfter())
		return nil
	}
	return err
}
