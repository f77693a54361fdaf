package endpoints

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity of the
	// endpoints-controller, and the source of its Events.
	ClientName = "endpoint-controller"
	// ControllerName is the endpoints.kubernetes.io/managed-by value of
	// the Endpoints objects it writes.
	ControllerName = "endpoint-controller"
	// LabelManagedBy marks the Endpoints objects it writes.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"

	queueName = "endpoint"
	// maxRetries bounds the retries of one Service (5ms doubling to 82s).
	maxRetries = 15
	// WriteSpacing is the least time between two writes of one Service's
	// Endpoints caused by pod changes, when no batch period is set
	// (endpointutil.WriteSpacing).
	WriteSpacing = endpointutil.WriteSpacing
)

// Config is what NewController needs.
type Config struct {
	Name      string
	Client    kubernetes.Interface
	Pods      coreinformers.PodInformer
	Services  coreinformers.ServiceInformer
	Endpoints coreinformers.EndpointsInformer
	Workers   int
	// BatchPeriod delays the syncs that pod changes cause.
	BatchPeriod time.Duration
	// WriteSpacing, when BatchPeriod is 0, holds back a pod-caused sync of
	// a Service whose Endpoints were written less than this long ago until
	// then (0: never; New sets WriteSpacing).
	WriteSpacing time.Duration
	// Recorder replaces the Event recorder Run builds (tests).
	Recorder record.EventRecorder
}

// Controller keeps the legacy Endpoints object of every selector-based
// Service.
type Controller struct {
	name    string
	client  kubernetes.Interface
	workers int
	batch   time.Duration

	services     corelisters.ServiceLister
	serviceIndex cache.Indexer
	podIndex     cache.Indexer
	endpoints    corelisters.EndpointsLister
	synced       []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
	// spacer spaces the pod-caused syncs of a Service that just wrote.
	spacer      *controller.Spacer
	triggerTime *endpointutil.TriggerTimeTracker
	stale       *staleTracker
	recorder    record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the endpoints-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	cfg := cc.Config.EndpointController
	return NewController(ctx, Config{
		Name:         name,
		Client:       client,
		Pods:         cc.InformerFactory.Core().V1().Pods(),
		Services:     cc.InformerFactory.Core().V1().Services(),
		Endpoints:    cc.InformerFactory.Core().V1().Endpoints(),
		Workers:      int(cfg.ConcurrentEndpointSyncs),
		BatchPeriod:  cfg.EndpointUpdatesBatchPeriod.Duration,
		WriteSpacing: cc.Paced(WriteSpacing),
	})
}

// NewController builds the controller and registers its informer handlers
// and indexes. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	svcInformer, podInformer, epInformer := cfg.Services.Informer(), cfg.Pods.Informer(), cfg.Endpoints.Informer()
	if err := endpointutil.AddServiceSelectorIndex(svcInformer); err != nil {
		return nil, err
	}
	if err := labelindex.Add(podInformer); err != nil {
		return nil, err
	}
	c := &Controller{
		name:         cfg.Name,
		client:       cfg.Client,
		workers:      cfg.Workers,
		batch:        cfg.BatchPeriod,
		services:     cfg.Services.Lister(),
		serviceIndex: svcInformer.GetIndexer(),
		podIndex:     podInformer.GetIndexer(),
		endpoints:    cfg.Endpoints.Lister(),
		queue:        controller.Queue(queueName),
		spacer:       endpointutil.NewWriteSpacer(cfg.BatchPeriod, cfg.WriteSpacing),
		triggerTime:  endpointutil.NewTriggerTimeTracker(),
		stale:        newStaleTracker(),
		recorder:     cfg.Recorder,
	}
	logger := klog.FromContext(ctx)
	svcReg, err := svcInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("adding Service event handler: %w", err)
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onPod(logger, nil, obj) },
		UpdateFunc: func(old, cur any) { c.onPod(logger, old, cur) },
		DeleteFunc: func(obj any) { c.onPod(logger, obj, nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	// Only deletions: an Endpoints object deleted while its Service exists
	// is recreated.
	epReg, err := epInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueue})
	if err != nil {
		return nil, fmt.Errorf("adding Endpoints event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, svcReg.HasSynced, epReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, queues every existing Endpoints object once
// (those whose Service is gone are deleted), then syncs Services with the
// configured number of workers until ctx is cancelled. It returns once
// every worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting endpoint controller")
	defer logger.Info("Shutting down endpoint controller")
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, ClientName)
		defer stop()
		c.recorder = recorder
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if cache.WaitForCacheSync(ctx.Done(), c.synced...) {
			c.checkLeftoverEndpoints()
		}
	}()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncService, MaxRetries: maxRetries, WaitFor: c.synced}
	w.Run(ctx, c.workers)
	wg.Wait()
}

// checkLeftoverEndpoints queues every Endpoints object, so that those left
// behind by a Service deleted while the controller was down are deleted.
// Leader-election records (Endpoints without a Service) are skipped.
func (c *Controller) checkLeftoverEndpoints() {
	list, err := c.endpoints.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("unable to list endpoints (%w); orphaned endpoints will not be cleaned up. (They're pretty harmless, but you can restart this component if you want another attempt made.)", err))
		return
	}
	for _, ep := range list {
		if _, ok := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]; ok {
			continue
		}
		c.queue.Add(ep.Namespace + "/" + ep.Name)
	}
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("couldn't get key for object %+v: %w", obj, err))
		return
	}
	c.queue.Add(key)
}

// onPod enqueues, after the batch period (or spaced from the Service's last
// write, endpointutil.WriteSpacing), the Services whose endpoints the pod
// event may change.
func (c *Controller) onPod(logger klog.Logger, old, cur any) {
	keys, err := endpointutil.ServicesForPodChange(c.serviceIndex, podOf(old), podOf(cur))
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Mapping a pod to its Services")
		return
	}
	for key := range keys {
		endpointutil.EnqueuePodChange(c.queue, c.spacer, key, c.batch)
	}
}

func podOf(obj any) *v1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, _ := obj.(*v1.Pod)
	return pod
}
