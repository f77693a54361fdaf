package csrcleaner

import (
	"crypto/x509"
	"encoding/pem"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
)

// Upstream's durations.
const (
	// ApprovedExpiration: an issued request is kept this long after its
	// approval.
	ApprovedExpiration = time.Hour
	// DeniedExpiration: a denied or failed request is kept this long after
	// that condition.
	DeniedExpiration = time.Hour
	// PendingExpiration: a request without conditions is kept this long
	// after creation, an approved one that was never issued this long after
	// its approval.
	PendingExpiration = 24 * time.Hour
)

// expired returns why csr is to be deleted at now (a log message and the
// duration that ran out, zero for an expired certificate), or ok false.
// The rules and their order are upstream's.
func expired(csr *certv1.CertificateSigningRequest, now time.Time) (why string, after time.Duration, ok bool) {
	issued := csrutil.IsIssued(csr)
	if issued && conditionOlder(csr, certv1.CertificateApproved, now, ApprovedExpiration) {
		return "Cleaning CSR as it is more than approvedExpiration duration old and approved.", ApprovedExpiration, true
	}
	if conditionOlder(csr, certv1.CertificateDenied, now, DeniedExpiration) {
		return "Cleaning CSR as it is more than deniedExpiration duration old and denied.", DeniedExpiration, true
	}
	if conditionOlder(csr, certv1.CertificateFailed, now, DeniedExpiration) {
		return "Cleaning CSR as it is more than deniedExpiration duration old and failed.", DeniedExpiration, true
	}
	if len(csr.Status.Conditions) == 0 && older(csr.CreationTimestamp, now, PendingExpiration) {
		return "Cleaning CSR as it is more than pendingExpiration duration old and unhandled.", PendingExpiration, true
	}
	if issued && hasCondition(csr, certv1.CertificateApproved) && certificateExpired(csr.Status.Certificate, now) {
		return "Cleaning CSR as the associated certificate is expired.", 0, true
	}
	if !issued && conditionOlder(csr, certv1.CertificateApproved, now, PendingExpiration) {
		return "Cleaning CSR as it is approved but unissued for more than pendingExpiration duration.", PendingExpiration, true
	}
	return "", 0, false
}

// older reports whether t is set and more than d before now.
func older(t metav1.Time, now time.Time, d time.Duration) bool {
	return !t.IsZero() && now.Sub(t.Time) > d
}

// conditionOlder reports whether a condition of type t was last updated
// more than d before now.
func conditionOlder(csr *certv1.CertificateSigningRequest, t certv1.RequestConditionType, now time.Time, d time.Duration) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && older(c.LastUpdateTime, now, d) {
			return true
		}
	}
	return false
}

func hasCondition(csr *certv1.CertificateSigningRequest, t certv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// certificateExpired reports whether the first certificate of the PEM data
// expired before now; data that does not parse has not expired.
func certificateExpired(data []byte, now time.Time) bool {
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	certs, err := x509.ParseCertificates(block.Bytes)
	if err != nil || len(certs) == 0 {
		return false
	}
	return now.After(certs[0].NotAfter)
}
