package cronjob

import (
	"context"
	"fmt"

	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the
	// Event source component, of the cronjob-controller.
	ClientName = "cronjob-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "cronjob"
)

// Controller creates the Jobs of CronJobs at their scheduled times and
// keeps their status and history.
type Controller struct {
	name    string
	client  kubernetes.Interface
	clock   clock.PassiveClock
	workers int

	cronJobLister batchlisters.CronJobLister
	jobIndexer    cache.Indexer
	synced        []cache.InformerSynced

	// written holds status writes the cache has not caught up with.
	written writtenCronJobs

	queue      workqueue.TypedRateLimitingInterface[string]
	recorder   record.EventRecorder
	stopEvents func()
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the cronjob-controller;
// --concurrent-cron-job-syncs sets its number of workers.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	var clk clock.WithTicker = clock.RealClock{}
	if cc.Clock != nil {
		clk = cc.Clock
	}
	recorder, stop := controller.NewRecorder(ctx, client, ClientName)
	c, err := newController(ctx, name, client, clk, recorder,
		cc.InformerFactory.Batch().V1().Jobs(), cc.InformerFactory.Batch().V1().CronJobs(),
		int(cc.Config.CronJobController.ConcurrentCronJobSyncs))
	if err != nil {
		stop()
		return nil, fmt.Errorf("creating CronJob controller V2: %w", err)
	}
	c.stopEvents = stop
	return c, nil
}

// newController wires the informers; the queue's delays run on clk, so
// that the requeue at the next scheduled time follows a fake clock.
func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker,
	recorder record.EventRecorder, jobs batchinformers.JobInformer, cronJobs batchinformers.CronJobInformer,
	workers int) (*Controller, error) {
	registerMetrics()
	c := &Controller{
		name:          name,
		client:        client,
		clock:         clk,
		workers:       workers,
		cronJobLister: cronJobs.Lister(),
		jobIndexer:    jobs.Informer().GetIndexer(),
		recorder:      recorder,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	if err := controllerref.AddControllerUIDIndex(jobs.Informer()); err != nil {
		return nil, fmt.Errorf("adding job controller UID indexer: %w", err)
	}
	jobReg, err := jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addJob(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateJob(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deleteJob(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Job event handler: %w", err)
	}
	cjReg, err := cronJobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateCronJob(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.enqueue(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding CronJob event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{jobReg.HasSynced, cjReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the workers until ctx is cancelled.
// It returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	if c.stopEvents != nil {
		defer c.stopEvents()
	}
	logger := klog.FromContext(ctx)
	logger.Info("Starting cronjob controller v2")
	defer logger.Info("Shutting down cronjob controller v2")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}
