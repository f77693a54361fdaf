package csrcleaner

import (
	"context"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses.
	ClientName = "certificate-controller"
	// PollingInterval is how often every request is looked at.
	PollingInterval = time.Hour
)

// Controller deletes finished and abandoned certificate requests.
type Controller struct {
	name     string
	client   kubernetes.Interface
	clock    clock.WithTicker
	interval time.Duration
	lister   certlisters.CertificateSigningRequestLister
	synced   cache.InformerSynced
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// certificatesigningrequest-cleaner-controller.
func New(_ context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	return newController(name, client, cc.InformerFactory.Certificates().V1().CertificateSigningRequests(), cc.Clock, PollingInterval), nil
}

func newController(name string, client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer,
	clk clock.WithTicker, interval time.Duration) *Controller {
	if clk == nil {
		clk = clock.RealClock{}
	}
	// No event handlers: the controller reads the cache on a timer.
	return &Controller{
		name:     name,
		client:   client,
		clock:    clk,
		interval: interval,
		lister:   informer.Lister(),
		synced:   informer.Informer().HasSynced,
	}
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, cleans at once and then every interval, until
// ctx is cancelled.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting CSR cleaner controller")
	defer logger.Info("Shutting down CSR cleaner controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
		return
	}
	ticker := c.clock.NewTicker(c.interval)
	defer ticker.Stop()
	for {
		c.clean(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// clean deletes every request past its deadline.
func (c *Controller) clean(ctx context.Context) {
	logger := klog.FromContext(ctx)
	csrs, err := c.lister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Unable to list CSRs")
		return
	}
	now := c.clock.Now()
	for _, csr := range csrs {
		why, after, ok := expired(csr, now)
		if !ok {
			continue
		}
		logger.Info(why, "csr", klog.KObj(csr), "after", after)
		if err := c.delete(ctx, csr); err != nil {
			logger.Error(err, "Error while attempting to clean CSR", "csr", klog.KObj(csr))
		}
	}
}

// delete removes the request the decision was made on, not a namesake
// created since.
func (c *Controller) delete(ctx context.Context, csr *certv1.CertificateSigningRequest) error {
	var opts metav1.DeleteOptions
	if uid := csr.UID; uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, opts)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
