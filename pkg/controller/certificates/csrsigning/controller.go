package csrsigning

import (
	"context"
	"fmt"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses
	// for all three CSR controllers.
	ClientName = "certificate-controller"
	// workers: upstream runs five per signer.
	workers = 5
)

// signer is one built-in signer: its CA and its checks.
type signer struct {
	ca    *caSource
	check check
}

// Controller signs approved requests of the configured built-in signers.
type Controller struct {
	name    string
	client  kubernetes.Interface
	clock   clock.PassiveClock
	maxTTL  time.Duration
	signers map[string]*signer
	loop    *csrutil.Loop
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// certificatesigningrequest-signing-controller. Without signing files it
// does not run, as upstream.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	logger := klog.FromContext(ctx)
	files, skipped, err := selectFiles(cc.Config.CSRSigningController)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		logger.Info("Skipping CSR signer controller because no csr cert/key was specified")
		return nil, nil
	}
	for _, s := range skipped {
		logger.Info("Skipping CSR signer controller because specific files were specified for other signers and not this one", "controller", s)
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	return newController(name, client, cc.InformerFactory.Certificates().V1().CertificateSigningRequests(),
		files, cc.Config.CSRSigningController.ClusterSigningDuration.Duration, cc.Clock)
}

func newController(name string, client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer,
	files []signerFiles, maxTTL time.Duration, clk clock.PassiveClock) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{name: name, client: client, clock: clk, maxTTL: maxTTL, signers: map[string]*signer{}}
	for _, f := range files {
		ca, err := loadCA(f.certFile, f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("failed to init %s certificate controller: %w", f.signerName, err)
		}
		c.signers[f.signerName] = &signer{ca: ca, check: checks[f.signerName]}
	}
	loop, err := csrutil.NewLoop(name, informer, c.wants, c.handle)
	if err != nil {
		return nil, err
	}
	c.loop = loop
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run signs requests until ctx is cancelled; it returns once its workers
// have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	names := make([]string, 0, len(c.signers))
	for n := range c.signers {
		names = append(names, n)
	}
	logger.Info("Starting certificate signing controller", "signers", names)
	defer logger.Info("Shutting down certificate signing controller")
	c.loop.Run(ctx, workers)
}

// wants: approved (not denied), not failed, for one of our signers.
func (c *Controller) wants(csr *certv1.CertificateSigningRequest) bool {
	_, ours := c.signers[csr.Spec.SignerName]
	return ours && csrutil.IsApproved(csr) && !csrutil.HasTrueCondition(csr, certv1.CertificateFailed)
}
