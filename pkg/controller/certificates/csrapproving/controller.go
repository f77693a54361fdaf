package csrapproving

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and ServiceAccount) identity upstream uses.
	ClientName = "certificate-controller"
	// ApprovedReason is the reason of the Approved condition.
	ApprovedReason = "AutoApproved"
	// workers, as upstream.
	workers = 5
)

// Controller approves kubelet client certificate requests.
type Controller struct {
	name   string
	client kubernetes.Interface
	loop   *csrutil.Loop
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// certificatesigningrequest-approving-controller.
func New(_ context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	return newController(name, client, cc.InformerFactory.Certificates().V1().CertificateSigningRequests())
}

func newController(name string, client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer) (*Controller, error) {
	c := &Controller{name: name, client: client}
	loop, err := csrutil.NewLoop(name, informer, undecided, c.handle)
	if err != nil {
		return nil, err
	}
	c.loop = loop
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run approves requests until ctx is cancelled; it returns once its workers
// have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting certificate approving controller")
	defer logger.Info("Shutting down certificate approving controller")
	c.loop.Run(ctx, workers)
}

// undecided: neither approved nor denied (the loop skips issued ones).
func undecided(csr *certv1.CertificateSigningRequest) bool {
	approved, denied := csrutil.ApprovalState(csr)
	return !approved && !denied
}

// handle approves the request if a recognizer knows it and its requester
// has the recognizer's permission.
func (c *Controller) handle(ctx context.Context, csr *certv1.CertificateSigningRequest) error {
	req, err := csrutil.ParseRequest(csr.Spec.Request)
	if err != nil {
		return controller.Permanent(fmt.Errorf("unable to parse csr %q: %w", csr.Name, err))
	}
	var tried []string
	for _, r := range recognizers {
		if !r.recognize(csr, req) {
			continue
		}
		tried = append(tried, r.permission.Subresource)
		allowed, err := c.authorize(ctx, csr, r.permission)
		if err != nil {
			return err
		}
		if allowed {
			return c.approve(ctx, csr, r.message)
		}
	}
	if len(tried) > 0 {
		// Retried with backoff, as upstream: the permission may be granted.
		return fmt.Errorf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried)
	}
	return nil
}

// authorize asks whether the request's author holds the permission.
func (c *Controller) authorize(ctx context.Context, csr *certv1.CertificateSigningRequest, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(csr.Spec.Extra))
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               csr.Spec.Username,
		UID:                csr.Spec.UID,
		Groups:             csr.Spec.Groups,
		Extra:              extra,
		ResourceAttributes: &attrs,
	}}
	res, err := c.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}

func (c *Controller) approve(ctx context.Context, csr *certv1.CertificateSigningRequest, message string) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type:    certv1.CertificateApproved,
		Status:  corev1.ConditionTrue,
		Reason:  ApprovedReason,
		Message: message,
	})
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating approval for csr: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Approved certificate request", "csr", csr.Name, "message", message)
	return nil
}
