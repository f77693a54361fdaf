package csrsigning

import (
	"crypto/x509"
	"fmt"

	certv1 "k8s.io/api/certificates/v1"
	capiv1beta1 "k8s.io/api/certificates/v1beta1"

	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
)

// check returns why a request may not be signed by a signer, or nil.
type check func(req *x509.CertificateRequest, usages []certv1.KeyUsage) error

// checks are upstream's per-signer requirements. legacy-unknown has none,
// for compatibility with what it signed before signer names existed.
var checks = map[string]check{
	certv1.KubeletServingSignerName:             csrutil.ValidateKubeletServing,
	certv1.KubeAPIServerClientKubeletSignerName: csrutil.ValidateKubeletClient,
	certv1.KubeAPIServerClientSignerName:        checkAPIServerClient,
	capiv1beta1.LegacyUnknownSignerName:         func(*x509.CertificateRequest, []certv1.KeyUsage) error { return nil },
}

// checkAPIServerClient allows client auth, required, with digital
// signature and key encipherment optional; the subject is free.
func checkAPIServerClient(_ *x509.CertificateRequest, usages []certv1.KeyUsage) error {
	clientAuth := false
	for _, u := range usages {
		switch u {
		case certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment:
		case certv1.UsageClientAuth:
			clientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !clientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certv1.UsageClientAuth)
	}
	return nil
}
