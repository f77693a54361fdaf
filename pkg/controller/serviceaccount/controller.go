package serviceaccount

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
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses.
	ClientName = "service-account-controller"
	// queueName is the workqueue metrics name.
	queueName = "serviceaccount"
	// workers is fixed to one, as upstream does.
	workers = 1
)

// Controller creates the default ServiceAccounts of active namespaces.
type Controller struct {
	name   string
	client kubernetes.Interface
	// ensure lists the ServiceAccounts every active namespace must hold.
	ensure []v1.ServiceAccount

	saLister corelisters.ServiceAccountLister
	nsLister corelisters.NamespaceLister
	synced   []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the serviceaccount-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client,
		cc.InformerFactory.Core().V1().ServiceAccounts(),
		cc.InformerFactory.Core().V1().Namespaces())
	if err != nil {
		return nil, fmt.Errorf("error creating ServiceAccount controller: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface,
	saInformer coreinformers.ServiceAccountInformer, nsInformer coreinformers.NamespaceInformer) (*Controller, error) {
	c := &Controller{
		name:     name,
		client:   client,
		ensure:   []v1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		saLister: saInformer.Lister(),
		nsLister: nsInformer.Lister(),
		queue:    controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)

	// Handlers get no periodic resync of their own: namespace adds and
	// updates and ServiceAccount deletions are all that can call for work.
	saReg, err := saInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) { c.serviceAccountDeleted(logger, obj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding ServiceAccount event handler: %w", err)
	}
	nsReg, err := nsInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNamespace,
		UpdateFunc: func(_, newObj any) { c.enqueueNamespace(newObj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Namespace event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{saReg.HasSynced, nsReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the worker until ctx is cancelled. It
// returns once the worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting service account controller")
	defer logger.Info("Shutting down service account controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncNamespace, WaitFor: c.synced}
	w.Run(ctx, workers)
}

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*v1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

// serviceAccountDeleted queues the namespace of any deleted ServiceAccount,
// so that a deleted default one is created again.
func (c *Controller) serviceAccountDeleted(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	sa, ok := obj.(*v1.ServiceAccount)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ServiceAccount delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.queue.Add(sa.Namespace)
}
