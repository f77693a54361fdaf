package clustertrustbundlepublisher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity upstream uses.
	ClientName = "kube-apiserver-serving-clustertrustbundle-publisher"
	// SignerName is the signer the bundle is published for.
	SignerName = "kubernetes.io/kube-apiserver-serving"
	// caName names the CA content provider in logs, as upstream's.
	caName = "kube-apiserver-serving"
	// queueName is upstream's workqueue metrics name.
	queueName = "ca_cert_publisher_cluster_trust_bundles"
	// queueKey is the only key: there is one bundle to keep.
	queueKey = ""
	// rootCAClientName is the identity whose kubeconfig CA is published
	// when --root-ca-file is unset (upstream reads it from that client).
	rootCAClientName = "root-ca-cert-publisher"
)

// Controller keeps the ClusterTrustBundle of SignerName equal to the CA.
type Controller struct {
	name       string
	signerName string
	ca         dynamiccertificates.CAContentProvider
	// runCA, if set, watches the CA file until its context ends.
	runCA func(context.Context)

	dyn   dynamic.Interface
	disco discovery.DiscoveryInterface
	// retry is the wait between failed discovery attempts.
	retry time.Duration

	queue workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// kube-apiserver-serving-clustertrustbundle-publisher-controller. It
// returns no controller when there is no CA to publish (no --root-ca-file
// and no CA in the kubeconfig), as upstream.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	ca, runCA, err := caProvider(cc)
	if err != nil || ca == nil {
		return nil, err
	}
	cfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client for %q: %w", ClientName, err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client for %q: %w", ClientName, err)
	}
	c := newController(name, SignerName, ca, dyn, disco)
	c.runCA = runCA
	return c, nil
}

// caProvider returns the CA to publish: --root-ca-file, reloaded when it
// changes on disk (runCA watches it), or else the CA data of the
// kubeconfig, or nil when that is empty.
func caProvider(cc *controllermanager.ControllerContext) (ca dynamiccertificates.CAContentProvider, runCA func(context.Context), err error) {
	if file := cc.Config.SAController.RootCAFile; file != "" {
		fileCA, err := dynamiccertificates.NewDynamicCAContentFromFile(caName, file)
		if err != nil {
			return nil, nil, fmt.Errorf("error parsing root-ca-file at %s: %w", file, err)
		}
		return fileCA, func(ctx context.Context) { fileCA.Run(ctx, 1) }, nil
	}
	cfg, err := cc.NewClientConfig(rootCAClientName)
	if err != nil || len(cfg.CAData) == 0 {
		return nil, nil, err
	}
	static, err := dynamiccertificates.NewStaticCAContent(caName, cfg.CAData)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create a static CA content provider for the kube-apiserver-serving signer: %w", err)
	}
	return static, nil, nil
}

func newController(name, signerName string, ca dynamiccertificates.CAContentProvider, dyn dynamic.Interface, disco discovery.DiscoveryInterface) *Controller {
	registerMetrics()
	c := &Controller{
		name:       name,
		signerName: signerName,
		ca:         ca,
		dyn:        dyn,
		disco:      disco,
		retry:      discoveryRetry,
		queue:      controller.Queue(queueName),
	}
	ca.AddListener(listenerFunc(func() { c.queue.Add(queueKey) }))
	return c
}

// listenerFunc adapts a function to dynamiccertificates.Listener.
type listenerFunc func()

func (f listenerFunc) Enqueue() { f() }

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run finds the ClusterTrustBundle API version the server serves, then
// keeps the bundle until ctx is cancelled. With no version served it only
// waits for ctx. It returns once every goroutine it started has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting ClusterTrustBundle CA cert publisher controller")
	defer logger.Info("Shutting down ClusterTrustBundle CA cert publisher controller")

	var wg sync.WaitGroup
	defer wg.Wait()
	if c.runCA != nil {
		wg.Go(func() { c.runCA(ctx) })
	}
	gvr, ok := c.servedVersion(ctx)
	if !ok {
		c.queue.ShutDown()
		<-ctx.Done()
		return
	}
	b, err := c.newBundles(ctx, gvr)
	if err != nil {
		// Only a failure to add a handler, which cannot happen to an
		// informer nobody started.
		logger.Error(err, "Cannot watch ClusterTrustBundles")
		c.queue.ShutDown()
		<-ctx.Done()
		return
	}
	wg.Go(func() { b.informer.RunWithContext(ctx) })
	c.queue.Add(queueKey)
	w := controller.Workers{Name: c.name, Queue: c.queue, WaitFor: []cache.InformerSynced{b.informer.HasSynced},
		Sync: func(ctx context.Context, _ string) error { return c.sync(ctx, b) }}
	w.Run(ctx, 1)
}
