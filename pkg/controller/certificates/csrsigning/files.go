package csrsigning

import (
	"errors"

	certv1 "k8s.io/api/certificates/v1"
	capiv1beta1 "k8s.io/api/certificates/v1beta1"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
)

// signerFiles is the CA of one built-in signer.
type signerFiles struct {
	signerName        string
	certFile, keyFile string
}

// errDefaultAndSpecific is upstream's error for --cluster-signing-{cert,key}-file
// together with a per-signer flag (options validation reports it first).
var errDefaultAndSpecific = errors.New("cannot specify default and per controller certs at the same time")

// selectFiles decides, as upstream, which signers run and with which files:
// none when neither --cluster-signing-{cert,key}-file (both) nor any
// per-signer flag is set; with a per-signer flag set, only the signers that
// have theirs; otherwise all four with the cluster-wide pair. skipped are
// the signers left out because only other signers have files.
func selectFiles(c kcmv1alpha1.CSRSigningControllerConfiguration) (run []signerFiles, skipped []string, err error) {
	perSigner := []struct {
		name string
		cfg  kcmv1alpha1.CSRSigningConfiguration
	}{
		{certv1.KubeletServingSignerName, c.KubeletServingSignerConfiguration},
		{certv1.KubeAPIServerClientKubeletSignerName, c.KubeletClientSignerConfiguration},
		{certv1.KubeAPIServerClientSignerName, c.KubeAPIServerClientSignerConfiguration},
		{capiv1beta1.LegacyUnknownSignerName, c.LegacyUnknownSignerConfiguration},
	}
	specific := false
	for _, s := range perSigner {
		if s.cfg.CertFile != "" || s.cfg.KeyFile != "" {
			specific = true
		}
	}
	missingDefault := c.ClusterSigningCertFile == "" || c.ClusterSigningKeyFile == ""
	switch {
	case missingDefault && !specific:
		return nil, nil, nil
	case !missingDefault && specific:
		return nil, nil, errDefaultAndSpecific
	}
	for _, s := range perSigner {
		f := signerFiles{signerName: s.name, certFile: c.ClusterSigningCertFile, keyFile: c.ClusterSigningKeyFile}
		if specific {
			f.certFile, f.keyFile = s.cfg.CertFile, s.cfg.KeyFile
		}
		if f.certFile == "" && f.keyFile == "" {
			skipped = append(skipped, s.name)
			continue
		}
		run = append(run, f)
	}
	return run, skipped, nil
}
