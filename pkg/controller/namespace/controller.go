package namespace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses.
	ClientName = "namespace-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "namespace"
	// deletionGracePeriod delays the first sync of a namespace after its
	// deletion, so that its content's own controllers see it first.
	deletionGracePeriod = 5 * time.Second
	// Upstream boosts the namespace controller's client: deleting a large
	// namespace takes many calls.
	qpsFactor   = 20
	burstFactor = 100
)

// Controller deletes the content of terminating namespaces.
type Controller struct {
	name    string
	workers int
	lister  corelisters.NamespaceLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	deleter *deleter
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the namespace-controller.
// --concurrent-namespace-syncs sets its number of workers and
// --namespace-sync-period the resync of its Namespace handler.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	cfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	cfg.QPS *= qpsFactor
	cfg.Burst *= burstFactor
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating namespace controller client: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating namespace controller metadata client: %w", err)
	}
	nc := cc.Config.NamespaceController
	d := &deleter{
		namespaces:     client.CoreV1().Namespaces(),
		pods:           client.CoreV1(),
		metadata:       metadataClient,
		discover:       client.Discovery().ServerPreferredNamespacedResources,
		finalizerToken: v1.FinalizerKubernetes,
		clock:          cc.Clock,
	}
	return newController(ctx, name, d, cc.InformerFactory.Core().V1().Namespaces(),
		nc.NamespaceSyncPeriod.Duration, int(nc.ConcurrentNamespaceSyncs))
}

func newController(ctx context.Context, name string, d *deleter, informer coreinformers.NamespaceInformer,
	resync time.Duration, workers int) (*Controller, error) {
	if d.clock == nil {
		d.clock = clock.RealClock{}
	}
	c := &Controller{
		name:    name,
		workers: workers,
		lister:  informer.Lister(),
		deleter: d,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(nil)}),
	}
	logger := klog.FromContext(ctx)
	reg, err := informer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(logger, obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(logger, obj) },
	}, resync)
	if err != nil {
		return nil, fmt.Errorf("adding Namespace event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// rateLimiter is upstream's: per-namespace backoff, 5ms doubling up to 60s
// (shorter than the controllers' default 1000s), and an overall token
// bucket of 10 qps with a burst of 100.
func rateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter[string](
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 60*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the workers until ctx is cancelled. It
// returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting namespace controller")
	defer logger.Info("Shutting down namespace controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// enqueue queues namespaces that are being deleted, after
// deletionGracePeriod.
func (c *Controller) enqueue(logger klog.Logger, obj any) {
	ns, ok := obj.(*v1.Namespace)
	if !ok || ns.DeletionTimestamp.IsZero() {
		return
	}
	logger.V(5).Info("Enqueuing terminating namespace", "namespace", klog.KObj(ns))
	c.queue.AddAfter(ns.Name, deletionGracePeriod)
}

// sync processes one namespace. While content is still terminating it
// comes back after half the estimate plus a second, without backoff.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished syncing namespace", "namespace", key, "duration", time.Since(start))
	}()
	ns, err := c.lister.Get(key)
	if apierrors.IsNotFound(err) {
		logger.Info("Namespace has been deleted", "namespace", key)
		return nil
	}
	if err != nil {
		return err
	}
	err = c.deleter.Delete(ctx, ns.Name)
	var remaining *ResourcesRemainingError
	if errors.As(err, &remaining) {
		delay := requeueDelay(remaining.Estimate)
		logger.V(4).Info("Content remaining in namespace", "namespace", key, "waitSeconds", int64(delay/time.Second))
		c.queue.AddAfter(key, delay)
		return nil
	}
	return err
}
