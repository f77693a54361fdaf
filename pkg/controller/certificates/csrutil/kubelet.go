package csrutil

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The kubelet certificate checks of upstream's certificates API helpers;
// their messages are what a failed request's condition carries.
var (
	errOrgNotSystemNodes = errors.New("subject organization is not system:nodes")
	errCNNotSystemNode   = errors.New("subject common name does not begin with system:node:")
	errNeedDNSOrIPSAN    = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed  = errors.New("DNS subjectAltNames are not allowed")
	errEmailNotAllowed   = errors.New("Email subjectAltNames are not allowed")
	errIPSANNotAllowed   = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed  = errors.New("URI subjectAltNames are not allowed")
)

const (
	nodesGroup     = "system:nodes"
	nodeUserPrefix = "system:node:"
)

// The usage sets a kubelet certificate may ask for: with key encipherment
// (RSA keys) or without.
var (
	servingUsages      = usageSet(certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageServerAuth)
	servingUsagesNoRSA = usageSet(certv1.UsageDigitalSignature, certv1.UsageServerAuth)
	clientUsages       = usageSet(certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageClientAuth)
	clientUsagesNoRSA  = usageSet(certv1.UsageDigitalSignature, certv1.UsageClientAuth)
)

func usageSet(usages ...certv1.KeyUsage) sets.Set[certv1.KeyUsage] {
	return sets.New(usages...)
}

// usagesMismatch is upstream's message, listing the RSA set sorted.
func usagesMismatch(want sets.Set[certv1.KeyUsage]) error {
	return fmt.Errorf("usages did not match %v", sets.List(want))
}

// ValidateKubeletServing returns why req with usages is not a kubelet
// serving certificate request (signer kubernetes.io/kubelet-serving), or
// nil. The checks and their order are upstream's.
func ValidateKubeletServing(req *x509.CertificateRequest, usages []certv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{nodesGroup}) {
		return errOrgNotSystemNodes
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errNeedDNSOrIPSAN
	}
	if len(req.EmailAddresses) > 0 {
		return errEmailNotAllowed
	}
	if len(req.URIs) > 0 {
		return errURISANNotAllowed
	}
	if got := usageSet(usages...); !got.Equal(servingUsages) && !got.Equal(servingUsagesNoRSA) {
		return usagesMismatch(servingUsages)
	}
	if !strings.HasPrefix(req.Subject.CommonName, nodeUserPrefix) {
		return errCNNotSystemNode
	}
	return nil
}

// ValidateKubeletClient returns why req with usages is not a kubelet
// client certificate request (signer
// kubernetes.io/kube-apiserver-client-kubelet), or nil. The checks and
// their order are upstream's.
func ValidateKubeletClient(req *x509.CertificateRequest, usages []certv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{nodesGroup}) {
		return errOrgNotSystemNodes
	}
	switch {
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, nodeUserPrefix) {
		return errCNNotSystemNode
	}
	if got := usageSet(usages...); !got.Equal(clientUsages) && !got.Equal(clientUsagesNoRSA) {
		return usagesMismatch(clientUsages)
	}
	return nil
}
