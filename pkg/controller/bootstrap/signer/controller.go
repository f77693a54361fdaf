package signer

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controller/bootstrap"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity upstream uses.
	ClientName = "bootstrap-signer"
	// queueName is upstream's workqueue metrics name.
	queueName = "bootstrap_signer_queue"
)

// Options are upstream's SignerOptions; kube-controller-manager has no flags
// for them and always runs with DefaultOptions.
type Options struct {
	// ConfigMapNamespace and ConfigMapName name the signed ConfigMap.
	ConfigMapNamespace, ConfigMapName string
	// TokenSecretNamespace is where bootstrap token Secrets live.
	TokenSecretNamespace string
}

// DefaultOptions returns kube-public/cluster-info signed with the tokens of
// kube-system.
func DefaultOptions() Options {
	return Options{
		ConfigMapNamespace:   metav1.NamespacePublic,
		ConfigMapName:        bootstrapapi.ConfigMapClusterInfo,
		TokenSecretNamespace: metav1.NamespaceSystem,
	}
}

// Controller keeps the signatures of one ConfigMap in line with the
// bootstrap tokens. Its queue only ever holds that ConfigMap's key, so
// every change of a token or of the ConfigMap collapses into one sync.
type Controller struct {
	name   string
	opts   Options
	key    string
	client kubernetes.Interface
	clock  clock.PassiveClock

	secretLister    corelisters.SecretLister
	configMapLister corelisters.ConfigMapLister
	synced          []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// bootstrap-signer-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.Clock, DefaultOptions(),
		cc.InformerFactory.Core().V1().Secrets(), cc.InformerFactory.Core().V1().ConfigMaps())
	if err != nil {
		return nil, fmt.Errorf("error creating BootstrapSigner controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, clk clock.WithTicker, opts Options,
	secrets coreinformers.SecretInformer, configMaps coreinformers.ConfigMapInformer) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{
		name:            name,
		opts:            opts,
		key:             opts.ConfigMapNamespace + "/" + opts.ConfigMapName,
		client:          client,
		clock:           clk,
		secretLister:    secrets.Lister(),
		configMapLister: configMaps.Lister(),
		// controller.Queue's rate limits, on the injected clock, so that
		// the requeue at a token's expiry follows it.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(clk)},
		),
	}
	logger := klog.FromContext(ctx)
	poke := func(any) { c.queue.Add(c.key) }
	cmReg, err := configMaps.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool { return c.isSignedConfigMap(logger, obj) },
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    poke,
			UpdateFunc: func(_, newObj any) { poke(newObj) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding ConfigMap event handler: %w", err)
	}
	secretReg, err := secrets.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			return bootstrap.IsTokenSecret(obj, opts.TokenSecretNamespace)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    poke,
			UpdateFunc: func(_, newObj any) { poke(newObj) },
			DeleteFunc: poke,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding Secret event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{cmReg.HasSynced, secretReg.HasSynced}
	return c, nil
}

// isSignedConfigMap filters ConfigMap events down to the signed ConfigMap.
// Deletions are not handled: there is nothing left to sign.
func (c *Controller) isSignedConfigMap(logger klog.Logger, obj any) bool {
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return false
	}
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ConfigMap event", "type", fmt.Sprintf("%T", obj))
		return false
	}
	return cm.Namespace == c.opts.ConfigMapNamespace && cm.Name == c.opts.ConfigMapName
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the single worker until ctx is
// cancelled. It returns once the worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting bootstrap signer controller")
	defer logger.Info("Shutting down bootstrap signer controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, 1)
}
