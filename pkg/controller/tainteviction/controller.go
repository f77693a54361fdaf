package tainteviction

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client identity: upstream runs this controller with
	// the node-controller's, whose ClusterRole it needs.
	ClientName = "node-controller"

	// Workqueue metrics names; the first two are upstream's.
	nodeQueueName     = "noexec_taint_node"
	podQueueName      = "noexec_taint_pod"
	evictionQueueName = "noexec_taint_eviction"

	// Worker counts. Node and pod work is in memory only; evictions wait on
	// the API server (upstream runs each in its own goroutine, all bounded by
	// the client's rate limit). An eviction is three requests in a row (get,
	// the DisruptionTarget patch, delete): 8 workers evicted about 12 pods a
	// second when 50 of 500 nodes went silent at --kube-api-qps=100, half
	// upstream's rate; 32 leave the client's rate limit the bound, as
	// upstream's goroutines do, without a goroutine per pending pod.
	nodeWorkers     = 1
	podWorkers      = 4
	evictionWorkers = 32

	// nodeNameIndex indexes pods by spec.nodeName; the name is upstream's,
	// so controllers sharing the pod informer share the index.
	nodeNameIndex = "spec.nodeName"
)

// Controller evicts pods from nodes with NoExecute taints they do not
// tolerate.
type Controller struct {
	name       string
	client     kubernetes.Interface
	clock      clock.PassiveClock
	compareOps bool

	podLister  corelisters.PodLister
	podIndexer cache.Indexer
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced

	nodeQueue workqueue.TypedRateLimitingInterface[string]
	podQueue  workqueue.TypedRateLimitingInterface[string]
	evictions *evictionQueue

	// recorder is set by Run before any worker starts.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the taint-eviction-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	compareOps := cc.FeatureGate != nil && cc.FeatureGate.Enabled(features.TaintTolerationComparisonOperators)
	c, err := newController(ctx, name, client, cc.Clock, compareOps,
		cc.InformerFactory.Core().V1().Pods(), cc.InformerFactory.Core().V1().Nodes())
	if err != nil {
		return nil, fmt.Errorf("error creating taint eviction controller: %w", err)
	}
	registerMetrics()
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker, compareOps bool,
	podInformer coreinformers.PodInformer, nodeInformer coreinformers.NodeInformer) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if err := addNodeNameIndex(podInformer.Informer()); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", nodeNameIndex, err)
	}
	c := &Controller{
		name:       name,
		client:     client,
		clock:      clk,
		compareOps: compareOps,
		podLister:  podInformer.Lister(),
		podIndexer: podInformer.Informer().GetIndexer(),
		nodeLister: nodeInformer.Lister(),
		nodeQueue:  controller.Queue(nodeQueueName),
		podQueue:   controller.Queue(podQueueName),
		evictions:  newEvictionQueue(clk, evictionQueueName),
	}
	logger := klog.FromContext(ctx)

	podReg, err := podInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: func(obj any) { c.deletePod(logger, obj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	nodeReg, err := nodeInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addNode,
		UpdateFunc: c.updateNode,
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, nodeReg.HasSynced}
	return c, nil
}

// addNodeNameIndex adds the spec.nodeName index to the pod informer unless
// another controller already did.
func addNodeNameIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[nodeNameIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
			return []string{pod.Spec.NodeName}, nil
		}
		return nil, nil
	}})
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the node, pod and eviction workers
// until ctx is cancelled. It returns once all of them have exited; pending
// evictions are dropped and running ones see ctx cancelled.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "controller", c.name)
	defer logger.Info("Shutting down controller", "controller", c.name)

	recorder, stopEvents := controller.NewRecorder(ctx, c.client, c.name)
	defer stopEvents()
	c.recorder = recorder

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		c.nodeQueue.ShutDown()
		c.podQueue.ShutDown()
		c.evictions.queue.ShutDown()
		return
	}
	pools := []struct {
		w controller.Workers
		n int
	}{
		{controller.Workers{Name: c.name, Queue: c.nodeQueue, Sync: c.syncNode}, nodeWorkers},
		{controller.Workers{Name: c.name, Queue: c.podQueue, Sync: c.syncPod}, podWorkers},
		{controller.Workers{Name: c.name, Queue: c.evictions.queue, Sync: c.runEviction}, evictionWorkers},
	}
	var wg sync.WaitGroup
	for i := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pools[i].w.Run(ctx, pools[i].n)
		}()
	}
	wg.Wait()
}
