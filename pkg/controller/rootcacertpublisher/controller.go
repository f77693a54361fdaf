package rootcacertpublisher

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
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
	// ConfigMapName is the name of the published ConfigMap.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey is the ConfigMap key holding the PEM CA bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation is the annotation describing the ConfigMap.
	DescriptionAnnotation = "kubernetes.io/description"
	// Description is the value written to DescriptionAnnotation.
	Description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."

	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses.
	ClientName = "root-ca-cert-publisher"
	// queueName is the workqueue metrics name.
	queueName = "root_ca_cert_publisher"
	// workers is fixed to one, as upstream does.
	workers = 1
)

// Controller publishes the root CA bundle into every namespace.
type Controller struct {
	name   string
	client kubernetes.Interface
	rootCA []byte

	cmLister corelisters.ConfigMapLister
	synced   []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// root-ca-certificate-publisher-controller. The bundle comes from
// --root-ca-file or, when that is unset, from the CA data of the
// controller's client config.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	rootCA, err := cc.RootCABundle(ClientName)
	if err != nil {
		return nil, err
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client,
		cc.InformerFactory.Core().V1().ConfigMaps(),
		cc.InformerFactory.Core().V1().Namespaces(),
		rootCA)
	if err != nil {
		return nil, fmt.Errorf("error creating root CA certificate publisher: %w", err)
	}
	return c, nil
}

func newController(ctx context.Context, name string, client kubernetes.Interface,
	cmInformer coreinformers.ConfigMapInformer, nsInformer coreinformers.NamespaceInformer, rootCA []byte) (*Controller, error) {
	registerMetrics()
	c := &Controller{
		name:     name,
		client:   client,
		rootCA:   rootCA,
		cmLister: cmInformer.Lister(),
		queue:    controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)

	cmReg, err := cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, newObj any) { c.configMapChanged(logger, newObj) },
		DeleteFunc: func(obj any) { c.configMapChanged(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding ConfigMap event handler: %w", err)
	}
	nsReg, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.namespaceAdded,
		UpdateFunc: func(_, newObj any) { c.namespaceUpdated(newObj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Namespace event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{cmReg.HasSynced, nsReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then runs the worker until ctx is cancelled. It
// returns once the worker has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting root CA cert publisher controller")
	defer logger.Info("Shutting down root CA cert publisher controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.syncNamespace, WaitFor: c.synced}
	w.Run(ctx, workers)
}

// configMapChanged queues the namespace of an updated or deleted
// kube-root-ca.crt ConfigMap.
func (c *Controller) configMapChanged(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ConfigMap event", "type", fmt.Sprintf("%T", obj))
		return
	}
	if cm.Name == ConfigMapName {
		c.queue.Add(cm.Namespace)
	}
}

func (c *Controller) namespaceAdded(obj any) {
	if ns, ok := obj.(*v1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

// namespaceUpdated queues active namespaces only: nothing can be created in
// a terminating one.
func (c *Controller) namespaceUpdated(obj any) {
	if ns, ok := obj.(*v1.Namespace); ok && ns.Status.Phase == v1.NamespaceActive {
		c.queue.Add(ns.Name)
	}
}
