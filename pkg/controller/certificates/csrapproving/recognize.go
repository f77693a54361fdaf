package csrapproving

import (
	"crypto/x509"

	authorizationv1 "k8s.io/api/authorization/v1"
	certv1 "k8s.io/api/certificates/v1"

	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
)

// recognizer is a kind of request the controller may approve: how to tell
// it, the permission its requester needs, and the approval's message.
type recognizer struct {
	recognize  func(csr *certv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	permission authorizationv1.ResourceAttributes
	message    string
}

func csrPermission(subresource string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{
		Group:       certv1.GroupName,
		Resource:    "certificatesigningrequests",
		Verb:        "create",
		Subresource: subresource,
		Version:     "*",
	}
}

// recognizers are tried in order, as upstream: a renewal by the node itself
// first, then a bootstrap by anyone allowed to request node client
// certificates.
var recognizers = []recognizer{
	{
		recognize:  isSelfNodeClient,
		permission: csrPermission("selfnodeclient"),
		message:    "Auto approving self kubelet client certificate after SubjectAccessReview.",
	},
	{
		recognize:  isNodeClient,
		permission: csrPermission("nodeclient"),
		message:    "Auto approving kubelet client certificate after SubjectAccessReview.",
	},
}

// isNodeClient: a valid kubelet client certificate request.
func isNodeClient(csr *certv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certv1.KubeAPIServerClientKubeletSignerName &&
		csrutil.ValidateKubeletClient(req, csr.Spec.Usages) == nil
}

// isSelfNodeClient: one filed by the node it names.
func isSelfNodeClient(csr *certv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClient(csr, req)
}
