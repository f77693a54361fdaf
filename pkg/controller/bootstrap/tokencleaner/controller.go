package tokencleaner

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controller/bootstrap"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity upstream uses.
	ClientName = "token-cleaner"
	// queueName is upstream's workqueue metrics name.
	queueName = "token_cleaner"
	// TokenSecretNamespace is where bootstrap token Secrets live
	// (upstream's default; kube-controller-manager has no flag for it).
	TokenSecretNamespace = metav1.NamespaceSystem
)

// Controller deletes expired bootstrap token Secrets.
type Controller struct {
	name      string
	namespace string
	client    kubernetes.Interface
	clock     clock.PassiveClock

	secretLister corelisters.SecretLister
	synced       []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the token-cleaner-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.Clock, TokenSecretNamespace, cc.InformerFactory.Core().V1().Secrets())
	if err != nil {
		return nil, fmt.Errorf("error creating TokenCleaner controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker, namespace string,
	secrets coreinformers.SecretInformer) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:         name,
		namespace:    namespace,
		client:       client,
		clock:        clk,
		secretLister: secrets.Lister(),
		// controller.Queue's rate limits, on the injected clock, so that
		// the requeue at a token's expiry follows it.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	reg, err := secrets.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool { return bootstrap.IsTokenSecret(obj, namespace) },
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueue(logger, obj) },
			UpdateFunc: func(_, newObj any) { c.enqueue(logger, newObj) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding Secret event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

func (c *Controller) enqueue(logger klog.Logger, obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		logger.Error(err, "Cannot queue Secret")
		return
	}
	c.queue.Add(key)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the single worker until ctx is
// cancelled. It returns once the worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting token cleaner controller")
	defer logger.Info("Shutting down token cleaner controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, 1)
}
