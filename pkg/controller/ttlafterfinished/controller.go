package ttlafterfinished

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses.
	ClientName = "ttl-after-finished-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "ttl_jobs_to_delete"
)

// Controller deletes finished Jobs once their TTL after finishing expires.
type Controller struct {
	name    string
	client  kubernetes.Interface
	clock   clock.Clock
	workers int

	jobLister batchlisters.JobLister
	synced    []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// ttl-after-finished-controller; --concurrent-ttl-after-finished-syncs sets
// its number of workers.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.Clock, cc.InformerFactory.Batch().V1().Jobs(),
		int(cc.Config.TTLAfterFinishedController.ConcurrentTTLSyncs))
	if err != nil {
		return nil, fmt.Errorf("error creating TTL after finished controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker,
	jobInformer batchinformers.JobInformer, workers int) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	registerMetrics()
	c := &Controller{
		name:      name,
		client:    client,
		clock:     clk,
		workers:   workers,
		jobLister: jobInformer.Lister(),
		// controller.Queue's rate limits, on the injected clock, so that
		// the requeue at a TTL's expiry follows it.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	reg, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueJob(logger, obj) },
		UpdateFunc: func(_, newObj any) { c.enqueueJob(logger, newObj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Job event handler: %w", err)
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
	logger.Info("Starting TTL after finished controller")
	defer logger.Info("Shutting down TTL after finished controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// enqueueJob queues finished Jobs with a TTL that are not being deleted.
func (c *Controller) enqueueJob(logger klog.Logger, obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok || job.DeletionTimestamp != nil || !needsCleanup(job) {
		return
	}
	logger.V(4).Info("Add job to cleanup", "job", klog.KObj(job))
	key, err := cache.MetaNamespaceKeyFunc(job)
	if err != nil {
		return
	}
	c.queue.Add(key)
}
