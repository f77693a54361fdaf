package csrsigning

import (
	"context"
	"fmt"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
)

// FailedReason is the reason of the Failed condition a request that does
// not meet its signer's requirements gets.
const FailedReason = "SignerValidationFailure"

// handle signs an approved request of one of our signers, or marks it
// Failed when it does not meet the signer's requirements.
func (c *Controller) handle(ctx context.Context, csr *certv1.CertificateSigningRequest) error {
	logger := klog.FromContext(ctx)
	s := c.signers[csr.Spec.SignerName]
	// The API server parsed the request and checked its signature on
	// creation; a request that fails now cannot be fixed by retrying.
	req, err := csrutil.ParseRequest(csr.Spec.Request)
	if err != nil {
		return controller.Permanent(fmt.Errorf("unable to parse csr %q: %w", csr.Name, err))
	}
	if err := req.CheckSignature(); err != nil {
		return controller.Permanent(fmt.Errorf("unable to verify the signature of csr %q: %w", csr.Name, err))
	}
	if err := s.check(req, csr.Spec.Usages); err != nil {
		return c.fail(ctx, csr, err)
	}
	cert, err := issue(s.ca.current(logger), req, csr.Spec.Usages, lifetime(csr.Spec.ExpirationSeconds, c.maxTTL), c.clock.Now())
	if err != nil {
		return fmt.Errorf("error auto signing csr: %w", err)
	}
	csr.Status.Certificate = cert
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating signature for csr: %w", err)
	}
	logger.V(2).Info("Signed certificate request", "csr", csr.Name, "signerName", csr.Spec.SignerName)
	return nil
}

// fail adds the Failed condition with the reason the signer refuses the
// request.
func (c *Controller) fail(ctx context.Context, csr *certv1.CertificateSigningRequest, reason error) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type:           certv1.CertificateFailed,
		Status:         corev1.ConditionTrue,
		Reason:         FailedReason,
		Message:        reason.Error(),
		LastUpdateTime: metav1.NewTime(c.clock.Now()),
	})
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error adding failure condition for csr: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Certificate request failed its signer's checks", "csr", csr.Name, "signerName", csr.Spec.SignerName, "reason", reason.Error())
	return nil
}
