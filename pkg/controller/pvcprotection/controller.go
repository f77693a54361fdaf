package pvcprotection

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "pvc-protection-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "pvcprotection"
	// maxBatch bounds how many queued keys one batch takes.
	maxBatch = 1000
	// batchWorkers is how many claims of a batch are synced at once.
	// Upstream syncs them one after another: deleting 500 claims then
	// waits for 500 sequential finalizer updates.
	batchWorkers = 4
	// unusedWindow aligns the syncs of newly bound claims that only need
	// their Unused condition: they are queued for the end of the current
	// window, so that the claims bound within one window are synced in one
	// batch and share one live pod list. Upstream syncs each as it comes:
	// binding 500 claims at the binder's pace made 500 live lists, one per
	// claim. The condition is informational; it appears at most a window
	// later. Finalizer work is never delayed.
	unusedWindow = time.Second
)

// Config holds what the controller is built from.
type Config struct {
	Name        string
	Client      kubernetes.Interface
	PVCInformer coreinformers.PersistentVolumeClaimInformer
	PodInformer coreinformers.PodInformer
	Clock       clock.Clock
	// UnusedCondition enables the Unused condition of bound claims.
	UnusedCondition bool
}

// Controller adds and removes the claim protection finalizer and keeps the
// Unused condition.
type Controller struct {
	name       string
	client     kubernetes.Interface
	clock      clock.Clock
	unusedCond bool

	pvcs       corelisters.PersistentVolumeClaimLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// persistentvolumeclaim-protection-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:            name,
		Client:          client,
		PVCInformer:     cc.InformerFactory.Core().V1().PersistentVolumeClaims(),
		PodInformer:     cc.InformerFactory.Core().V1().Pods(),
		Clock:           cc.Clock,
		UnusedCondition: features.Enabled(cc.FeatureGate, features.PersistentVolumeClaimUnusedSinceTime),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to init the pvc protection controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:       cfg.Name,
		client:     cfg.Client,
		clock:      clk,
		unusedCond: cfg.UnusedCondition,
		pvcs:       cfg.PVCInformer.Lister(),
		podIndexer: cfg.PodInformer.Informer().GetIndexer(),
		queue:      controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)
	podInformer := cfg.PodInformer.Informer()
	if err := storageutil.AddPodPVCIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding the pod-pvc index: %w", err)
	}
	pvcReg, err := cfg.PVCInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.pvcChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.pvcChanged(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("could not add PVC event handler: %w", err)
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(logger, nil, obj, false) },
		UpdateFunc: func(old, obj any) { c.podChanged(logger, old, obj, false) },
		DeleteFunc: func(obj any) { c.podChanged(logger, nil, obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("could not add Pod event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{pvcReg.HasSynced, podReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes claims in batches until ctx is cancelled and returns once
// its worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting PVC protection controller")
	defer logger.Info("Shutting down PVC protection controller")
	defer c.queue.ShutDown()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processBatch(ctx) {
			}
		}, time.Second)
	}()
	<-ctx.Done()
	c.queue.ShutDown()
	<-done
}

// processBatch takes the next key and every key queued behind it (up to
// maxBatch) and syncs them, batchWorkers at a time, with one live pod list
// per namespace at most. It returns false once the queue is shut down.
func (c *Controller) processBatch(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	batch := []string{key}
	// This is the queue's only consumer: a positive length means Get
	// returns at once.
	for len(batch) < maxBatch && c.queue.Len() > 0 {
		k, quit := c.queue.Get()
		if quit {
			break
		}
		batch = append(batch, k)
	}
	lists := newLivePods()
	keys := make(chan string)
	var wg sync.WaitGroup
	for range min(batchWorkers, len(batch)) {
		wg.Go(func() {
			for k := range keys {
				c.finish(ctx, k, c.safeSync(ctx, k, lists))
			}
		})
	}
	for _, k := range batch {
		keys <- k
	}
	close(keys)
	wg.Wait()
	return true
}

// finish tells the queue how the sync of key ended.
func (c *Controller) finish(ctx context.Context, key string, err error) {
	switch {
	case err == nil:
		c.queue.Forget(key)
	case controller.IsPermanent(err):
		utilruntime.HandleErrorWithContext(ctx, err, "Dropping PVC out of the queue", "key", key)
		c.queue.Forget(key)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "PVC failed", "key", key)
		c.queue.AddRateLimited(key)
	}
	c.queue.Done(key)
}

func (c *Controller) safeSync(ctx context.Context, key string, lists *livePods) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while syncing %q: %v", key, r)
		}
	}()
	return c.sync(ctx, key, lists)
}

// livePods caches, for one batch, the live pod list of each namespace:
// the first sync that needs a namespace's list reads it, the others of the
// batch wait for that read and share it (or its error).
type livePods struct {
	mu          sync.Mutex
	byNamespace map[string]*podList
}

func newLivePods() *livePods { return &livePods{byNamespace: map[string]*podList{}} }

type podList struct {
	once sync.Once
	pods []v1.Pod
	err  error
}

func (c *Controller) livePods(ctx context.Context, lists *livePods, namespace string) ([]v1.Pod, error) {
	lists.mu.Lock()
	l, ok := lists.byNamespace[namespace]
	if !ok {
		l = &podList{}
		lists.byNamespace[namespace] = l
	}
	lists.mu.Unlock()
	l.once.Do(func() {
		klog.FromContext(ctx).V(4).Info("Live listing Pods in namespace", "namespace", namespace)
		list, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			l.err = fmt.Errorf("live list of pods failed: %w", err)
			return
		}
		l.pods = list.Items
		if l.pods == nil {
			l.pods = []v1.Pod{}
		}
	})
	return l.pods, l.err
}
