package podcertificaterequestcleaner

import (
	"context"
	"fmt"
	"time"

	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity upstream uses.
	ClientName = "podcertificaterequestcleaner"
	// MaxAge is how long after its creation a PodCertificateRequest is
	// deleted (upstream's threshold).
	MaxAge = 15 * time.Minute
	// queueName is the workqueue metrics name (upstream has no queue).
	queueName = "podcertificaterequest_cleaner"
)

// Controller deletes PodCertificateRequests once they are MaxAge old.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.PassiveClock
	maxAge time.Duration

	lister certlisters.PodCertificateRequestLister
	synced []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// podcertificaterequest-cleaner-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.Clock, MaxAge, cc.InformerFactory.Certificates().V1().PodCertificateRequests())
	if err != nil {
		return nil, fmt.Errorf("error creating PodCertificateRequest cleaner: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker, maxAge time.Duration,
	pcrs certinformers.PodCertificateRequestInformer) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:   name,
		client: client,
		clock:  clk,
		maxAge: maxAge,
		lister: pcrs.Lister(),
		// controller.Queue's rate limits, on the injected clock, so that
		// the requeue at a request's deadline follows it.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	enqueue := func(obj any) {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			logger.Error(err, "Cannot queue PodCertificateRequest")
			return
		}
		c.queue.Add(key)
	}
	// Updates cannot move a request's creation; adds (including the
	// initial list) are all it takes.
	reg, err := pcrs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue})
	if err != nil {
		return nil, fmt.Errorf("adding PodCertificateRequest event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the single worker until ctx is
// cancelled. It returns once the worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting PodCertificateRequest cleaner controller")
	defer logger.Info("Shutting down PodCertificateRequest cleaner controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, 1)
}
