package csrutil

import (
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// ApprovalState reports whether the request carries an Approved and a
// Denied condition. Only the condition types count, as upstream reads them:
// the API server accepts Approved and Denied with status True only.
func ApprovalState(csr *certv1.CertificateSigningRequest) (approved, denied bool) {
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certv1.CertificateApproved:
			approved = true
		case certv1.CertificateDenied:
			denied = true
		}
	}
	return approved, denied
}

// IsApproved reports whether the request was approved and not denied.
func IsApproved(csr *certv1.CertificateSigningRequest) bool {
	approved, denied := ApprovalState(csr)
	return approved && !denied
}

// HasTrueCondition reports whether the request has a condition of type t
// whose status is True or empty (objects written before status was
// required).
func HasTrueCondition(csr *certv1.CertificateSigningRequest, t certv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// IsIssued reports whether the request carries a certificate.
func IsIssued(csr *certv1.CertificateSigningRequest) bool {
	return len(csr.Status.Certificate) > 0
}
