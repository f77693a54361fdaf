package options

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"

	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrsigning"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func addCSRSigningFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.CSRSigningController
	const single = "  If specified, no more specific --cluster-signing-* flag may be specified."
	const specific = "  If specified, --cluster-signing-{cert,key}-file must not be set."
	fs.StringVar(&o.ClusterSigningCertFile, "cluster-signing-cert-file", o.ClusterSigningCertFile, "Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates."+single)
	fs.StringVar(&o.ClusterSigningKeyFile, "cluster-signing-key-file", o.ClusterSigningKeyFile, "Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates."+single)
	signer := func(s *kcmv1alpha1.CSRSigningConfiguration, prefix, signerName string) {
		fs.StringVar(&s.CertFile, prefix+"-cert-file", s.CertFile, "Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the "+signerName+" signer."+specific)
		fs.StringVar(&s.KeyFile, prefix+"-key-file", s.KeyFile, "Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the "+signerName+" signer."+specific)
	}
	signer(&o.KubeletServingSignerConfiguration, "cluster-signing-kubelet-serving", "kubernetes.io/kubelet-serving")
	signer(&o.KubeletClientSignerConfiguration, "cluster-signing-kubelet-client", "kubernetes.io/kube-apiserver-client-kubelet")
	signer(&o.KubeAPIServerClientSignerConfiguration, "cluster-signing-kube-apiserver-client", "kubernetes.io/kube-apiserver-client")
	signer(&o.LegacyUnknownSignerConfiguration, "cluster-signing-legacy-unknown", "kubernetes.io/legacy-unknown")
	fs.DurationVar(&o.ClusterSigningDuration.Duration, "cluster-signing-duration", o.ClusterSigningDuration.Duration, "The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
}

func validateCSRSigning(c *config.ComponentConfig) []error {
	o := c.CSRSigningController
	var errs []error
	pairs := []struct {
		prefix string
		s      kcmv1alpha1.CSRSigningConfiguration
	}{
		{"cluster-signing", kcmv1alpha1.CSRSigningConfiguration{CertFile: o.ClusterSigningCertFile, KeyFile: o.ClusterSigningKeyFile}},
		{"cluster-signing-kubelet-serving", o.KubeletServingSignerConfiguration},
		{"cluster-signing-kubelet-client", o.KubeletClientSignerConfiguration},
		{"cluster-signing-kube-apiserver-client", o.KubeAPIServerClientSignerConfiguration},
		{"cluster-signing-legacy-unknown", o.LegacyUnknownSignerConfiguration},
	}
	specificSet := false
	for i, p := range pairs {
		if (p.s.CertFile == "") != (p.s.KeyFile == "") {
			errs = append(errs, fmt.Errorf("--%s-cert-file and --%s-key-file must be set together", p.prefix, p.prefix))
		}
		certErr := checkCertFile(p.prefix+"-cert-file", p.s.CertFile)
		keyErr := checkKeyFile(p.prefix+"-key-file", p.s.KeyFile)
		for _, err := range []error{certErr, keyErr} {
			if err != nil {
				errs = append(errs, err)
			}
		}
		if certErr == nil && keyErr == nil && p.s.CertFile != "" && p.s.KeyFile != "" {
			if err := checkSigningPair(p.prefix, p.s); err != nil {
				errs = append(errs, err)
			}
		}
		if i > 0 && (p.s.CertFile != "" || p.s.KeyFile != "") {
			specificSet = true
		}
	}
	if (o.ClusterSigningCertFile != "" || o.ClusterSigningKeyFile != "") && specificSet {
		errs = append(errs, fmt.Errorf("cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"))
	}
	return errs
}

// checkSigningPair checks what the signer needs beyond each file parsing:
// one CA certificate and a key that matches it. Upstream finds a mismatch
// only when the signing controller starts (a fatal log).
func checkSigningPair(prefix string, s kcmv1alpha1.CSRSigningConfiguration) error {
	if err := csrsigning.CheckCAFiles(s.CertFile, s.KeyFile); err != nil {
		return fmt.Errorf("--%s-cert-file=%s and --%s-key-file=%s do not hold a usable CA: %w", prefix, s.CertFile, prefix, s.KeyFile, errors.Unwrap(err))
	}
	return nil
}
