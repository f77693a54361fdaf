package podautoscaler

import (
	"context"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the
	// Event source component, of the horizontal-pod-autoscaler-controller.
	ClientName = "horizontal-pod-autoscaler"
	queueName  = "horizontalpodautoscaler"
)

var hpaResource = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers").GroupResource()

// Config is what NewController needs.
type Config struct {
	Name   string
	Client kubernetes.Interface
	// Scales reads and writes the targets' scale subresource; Mapper maps
	// a target's kind to its resources.
	Scales  scale.ScalesGetter
	Mapper  meta.RESTMapper
	Metrics metrics.Client
	// InvalidateMetricVersions, if set, is called every SyncPeriod (the
	// custom metrics API's version is discovered again).
	InvalidateMetricVersions func()

	HPAs autoscalinginformers.HorizontalPodAutoscalerInformer
	Pods coreinformers.PodInformer
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Recorder replaces the Event recorder Run builds (tests).
	Recorder record.EventRecorder

	Workers                 int
	SyncPeriod              time.Duration
	DownscaleStabilization  time.Duration
	Tolerance               float64
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
	ConfigurableTolerance   bool // HPAConfigurableTolerance
	ScaleToZero             bool // HPAScaleToZero
	ObservedGeneration      bool // HPAGeneration
	PodLevelResources       bool // PodLevelResources
	StaleConsistency        bool // StaleControllerConsistencyHPA
}

// Controller scales the targets of HorizontalPodAutoscalers.
type Controller struct {
	name     string
	client   kubernetes.Interface
	scales   scale.ScalesGetter
	mapper   meta.RESTMapper
	clock    clock.WithTicker
	recorder record.EventRecorder
	calc     *replicaCalculator

	hpaLister autoscalinglisters.HorizontalPodAutoscalerLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]

	selectors   *selectorStore
	history     *history
	consistency *expectations.Consistency
	invalidate  func()

	workers                int
	syncPeriod             time.Duration
	downscaleStabilization time.Duration
	tolerance              float64
	configurableTolerance  bool
	scaleToZero            bool
	observedGeneration     bool
}

var _ controllermanager.Controller = (*Controller)(nil)

// NewController builds the controller and registers its informer handler.
// It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:      cfg.Name,
		client:    cfg.Client,
		scales:    cfg.Scales,
		mapper:    cfg.Mapper,
		clock:     clk,
		recorder:  cfg.Recorder,
		hpaLister: cfg.HPAs.Lister(),
		podLister: cfg.Pods.Lister(),
		// Every key waits a whole sync period when re-added, errors
		// included: upstream's fixed-interval limiter.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig[string](fixedInterval(cfg.SyncPeriod),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)}),
		selectors:              newSelectorStore(),
		history:                newHistory(),
		invalidate:             cfg.InvalidateMetricVersions,
		workers:                cfg.Workers,
		syncPeriod:             cfg.SyncPeriod,
		downscaleStabilization: cfg.DownscaleStabilization,
		tolerance:              cfg.Tolerance,
		configurableTolerance:  cfg.ConfigurableTolerance,
		scaleToZero:            cfg.ScaleToZero,
		observedGeneration:     cfg.ObservedGeneration,
	}
	c.calc = &replicaCalculator{
		metrics:                 cfg.Metrics,
		pods:                    c.podLister,
		clock:                   clk,
		cpuInitializationPeriod: cfg.CPUInitializationPeriod,
		initialReadinessDelay:   cfg.InitialReadinessDelay,
		podLevelResources:       cfg.PodLevelResources,
	}
	hpaInformer := cfg.HPAs.Informer()
	if cfg.StaleConsistency {
		c.consistency = expectations.NewConsistency(map[schema.GroupResource]expectations.SyncedVersioner{
			hpaResource: hpaInformer.GetStore(),
		})
	}
	logger := klog.FromContext(ctx)
	// The handler's resync, every sync period, keeps each HPA's key coming
	// back even when a sync's own re-add was lost (upstream's rule).
	reg, err := hpaInformer.AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addHPA(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateHPA(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deleteHPA(logger, obj) },
	}, cfg.SyncPeriod)
	if err != nil {
		return nil, fmt.Errorf("adding HorizontalPodAutoscaler event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced, cfg.Pods.Informer().HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs HPAs until ctx is cancelled, and
// every sync period forgets the custom metrics API's discovered version.
// It returns once every goroutine it started has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting HPA controller")
	defer logger.Info("Shutting down HPA controller")

	if c.recorder == nil {
		recorder, stopEvents := controller.NewRecorder(ctx, c.client, ClientName)
		defer stopEvents()
		c.recorder = recorder
	}
	var wg sync.WaitGroup
	if c.invalidate != nil {
		wg.Go(func() { c.invalidateEvery(ctx) })
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
	wg.Wait()
}

func (c *Controller) invalidateEvery(ctx context.Context) {
	t := c.clock.NewTicker(c.syncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.invalidate()
		}
	}
}
