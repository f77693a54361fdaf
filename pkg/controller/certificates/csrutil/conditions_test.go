package csrutil

import (
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

func TestApprovalAndConditions(t *testing.T) {
	now := time.Now()
	emptyStatusFailed := func(c *certv1.CertificateSigningRequest) {
		c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{Type: certv1.CertificateFailed})
	}
	falseFailed := func(c *certv1.CertificateSigningRequest) {
		c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{Type: certv1.CertificateFailed, Status: corev1.ConditionFalse})
	}
	tests := []struct {
		name                 string
		opts                 []csrtest.Option
		approved, isApproved bool
		failed, issued       bool
	}{
		{name: "pending"},
		{name: "approved", opts: []csrtest.Option{csrtest.Approved(now)}, approved: true, isApproved: true},
		{name: "approved and denied", opts: []csrtest.Option{csrtest.Approved(now), csrtest.WithCondition(certv1.CertificateDenied, now)}, approved: true},
		{name: "failed with empty status", opts: []csrtest.Option{emptyStatusFailed}, failed: true},
		{name: "failed False", opts: []csrtest.Option{falseFailed}},
		{name: "issued", opts: []csrtest.Option{csrtest.WithCertificate([]byte("x"))}, issued: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			csr := csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, nil, tc.opts...)
			approved, _ := ApprovalState(csr)
			if approved != tc.approved || IsApproved(csr) != tc.isApproved {
				t.Errorf("approved = %v, IsApproved = %v; want %v, %v", approved, IsApproved(csr), tc.approved, tc.isApproved)
			}
			if got := HasTrueCondition(csr, certv1.CertificateFailed); got != tc.failed {
				t.Errorf("HasTrueCondition(Failed) = %v, want %v", got, tc.failed)
			}
			if got := IsIssued(csr); got != tc.issued {
				t.Errorf("IsIssued = %v, want %v", got, tc.issued)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	good, _ := csrtest.Request{CommonName: "a"}.PEM(t)
	for name, data := range map[string][]byte{
		"garbage":          []byte("not PEM at all"),
		"certificate type": []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
		"truncated DER":    []byte("-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"),
	} {
		if _, err := ParseRequest(data); err == nil {
			t.Errorf("%s: ParseRequest succeeded", name)
		}
	}
	req, err := ParseRequest(good)
	if err != nil || req.Subject.CommonName != "a" {
		t.Errorf("ParseRequest(good) = %v, %v", req, err)
	}
}
