package csrtest

import (
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Option changes a CertificateSigningRequest under construction.
type Option func(*certv1.CertificateSigningRequest)

// CSR returns a CertificateSigningRequest named name for signer with the
// PEM request, then applies opts.
func CSR(name, signer string, request []byte, opts ...Option) *certv1.CertificateSigningRequest {
	csr := &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certv1.CertificateSigningRequestSpec{SignerName: signer, Request: request},
	}
	for _, o := range opts {
		o(csr)
	}
	return csr
}

// WithUsages sets spec.usages.
func WithUsages(u ...certv1.KeyUsage) Option {
	return func(c *certv1.CertificateSigningRequest) { c.Spec.Usages = u }
}

// WithRequester sets spec.username and spec.groups, which the API server
// fills from the creating user.
func WithRequester(user string, groups ...string) Option {
	return func(c *certv1.CertificateSigningRequest) { c.Spec.Username, c.Spec.Groups = user, groups }
}

// WithExpirationSeconds sets spec.expirationSeconds.
func WithExpirationSeconds(s int32) Option {
	return func(c *certv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = &s }
}

// WithCondition appends a True condition last updated at t.
func WithCondition(t certv1.RequestConditionType, at time.Time) Option {
	return func(c *certv1.CertificateSigningRequest) {
		c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{
			Type: t, Status: corev1.ConditionTrue, Reason: "Test", LastUpdateTime: metav1.NewTime(at),
		})
	}
}

// Approved appends an Approved condition last updated at t.
func Approved(at time.Time) Option { return WithCondition(certv1.CertificateApproved, at) }

// WithCertificate sets status.certificate.
func WithCertificate(pem []byte) Option {
	return func(c *certv1.CertificateSigningRequest) { c.Status.Certificate = pem }
}

// CreatedAt sets metadata.creationTimestamp.
func CreatedAt(t time.Time) Option {
	return func(c *certv1.CertificateSigningRequest) { c.CreationTimestamp = metav1.NewTime(t) }
}
