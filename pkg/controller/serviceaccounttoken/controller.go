package serviceaccounttoken

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the identity of the controller's (root) client.
	ClientName = "tokens-controller"
	// queueName is upstream's workqueue metrics name, shared by both queues.
	queueName = "serviceaccount_tokens_service"
	// maxRetries is how often a key is retried before it is dropped.
	maxRetries = 10
)

// Controller populates and cleans up legacy ServiceAccount token Secrets.
type Controller struct {
	name    string
	client  kubernetes.Interface
	signer  *Signer
	rootCA  []byte
	workers int

	saLister     corelisters.ServiceAccountLister
	secretLister corelisters.SecretLister
	synced       []cache.InformerSynced

	saQueue     workqueue.TypedRateLimitingInterface[string]
	secretQueue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// serviceaccount-token-controller. cc must be the root ControllerContext.
// It returns no controller when --service-account-private-key-file is unset.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	keyFile := cc.Config.SAController.ServiceAccountKeyFile
	if keyFile == "" {
		klog.FromContext(ctx).Info("Controller is disabled because there is no private key", "controller", name)
		return nil, nil
	}
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("error reading key for service account token controller: %w", err)
	}
	signer, err := NewSigner(key)
	if err != nil {
		return nil, fmt.Errorf("failed to build token generator: %w", err)
	}
	rootCA, err := cc.RootCABundle(ClientName)
	if err != nil {
		return nil, err
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, signer, rootCA,
		cc.InformerFactory.Core().V1().ServiceAccounts(), cc.InformerFactory.Core().V1().Secrets())
	if err != nil {
		return nil, fmt.Errorf("error creating Tokens controller: %w", err)
	}
	c.workers = int(cc.Config.SAController.ConcurrentSATokenSyncs)
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface, signer *Signer, rootCA []byte,
	saInformer coreinformers.ServiceAccountInformer, secretInformer coreinformers.SecretInformer) (*Controller, error) {
	c := &Controller{
		name:         name,
		client:       client,
		signer:       signer,
		rootCA:       rootCA,
		workers:      1,
		saLister:     saInformer.Lister(),
		secretLister: secretInformer.Lister(),
		saQueue:      controller.Queue(queueName),
		secretQueue:  controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)

	saReg, err := saInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.serviceAccountChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.serviceAccountChanged(logger, obj) },
		DeleteFunc: func(obj any) { c.serviceAccountChanged(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding ServiceAccount event handler: %w", err)
	}
	secretReg, err := secretInformer.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: isTokenSecret,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.secretChanged(logger, obj) },
			UpdateFunc: func(_, obj any) { c.secretChanged(logger, obj) },
			DeleteFunc: func(obj any) { c.secretChanged(logger, obj) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding Secret event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{saReg.HasSynced, secretReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the ServiceAccount and the Secret
// workers until ctx is cancelled. It returns once all of them have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting service account token controller")
	defer logger.Info("Shutting down service account token controller")

	queues := []controller.Workers{
		{Name: c.name, Queue: c.saQueue, Sync: c.syncServiceAccount, WaitFor: c.synced, MaxRetries: maxRetries},
		{Name: c.name, Queue: c.secretQueue, Sync: c.syncSecret, WaitFor: c.synced, MaxRetries: maxRetries},
	}
	var wg sync.WaitGroup
	for i := range queues {
		wg.Go(func() { queues[i].Run(ctx, c.workers) })
	}
	wg.Wait()
}

// isTokenSecret lets only kubernetes.io/service-account-token Secrets (and
// their tombstones) through to the handlers.
func isTokenSecret(obj any) bool {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	s, ok := obj.(*v1.Secret)
	return ok && s.Type == v1.SecretTypeServiceAccountToken
}

func (c *Controller) serviceAccountChanged(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	sa, ok := obj.(*v1.ServiceAccount)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ServiceAccount event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.saQueue.Add(serviceAccountKey(sa))
}

func (c *Controller) secretChanged(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	s, ok := obj.(*v1.Secret)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Secret event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.secretQueue.Add(secretKey(s))
}
