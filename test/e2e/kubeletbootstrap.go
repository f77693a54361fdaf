package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// What kubeadm sets up for TLS bootstrapping (kubeadm init's bootstrap-token
// phase): the group its node tokens carry, and three ClusterRoleBindings.
const (
	// KubeadmNodeTokenGroup is the extra group of kubeadm's node bootstrap
	// tokens.
	KubeadmNodeTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

	nodeClientRole     = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	selfNodeClientRole = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
)

// The approval messages of upstream's approving controller.
const (
	NodeClientApprovalMessage     = "Auto approving kubelet client certificate after SubjectAccessReview."
	SelfNodeClientApprovalMessage = "Auto approving self kubelet client certificate after SubjectAccessReview."
)

// KubeadmNodeBootstrapRBAC creates kubeadm's bindings: its node tokens may
// file requests (kubeadm:kubelet-bootstrap) and have them approved
// (kubeadm:node-autoapprove-bootstrap); nodes may have their renewals
// approved (kubeadm:node-autoapprove-certificate-rotation). Existing
// bindings are left as they are.
func KubeadmNodeBootstrapRBAC(ctx context.Context, client kubernetes.Interface) error {
	for _, b := range []struct{ name, role, group string }{
		{"kubeadm:kubelet-bootstrap", "system:node-bootstrapper", KubeadmNodeTokenGroup},
		{"kubeadm:node-autoapprove-bootstrap", nodeClientRole, KubeadmNodeTokenGroup},
		{"kubeadm:node-autoapprove-certificate-rotation", selfNodeClientRole, "system:nodes"},
	} {
		_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: b.group}},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("ClusterRoleBinding %s: %w", b.name, err)
		}
	}
	return nil
}

// CreateNodeBootstrapToken creates the Secret of a bootstrap token
// id.secret for authentication, in kubeadm's node token group, expiring
// after ttl, and returns the token.
func CreateNodeBootstrapToken(ctx context.Context, client kubernetes.Interface, id, secret string, ttl time.Duration) (string, error) {
	_, err := client.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id":                       id,
			"token-secret":                   secret,
			"expiration":                     time.Now().Add(ttl).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              KubeadmNodeTokenGroup,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("bootstrap token %s: %w", id, err)
	}
	return id + "." + secret, nil
}

// TokenConfig is a client config for the cluster of base that
// authenticates with the bearer token only (the TLS trust of base is kept).
func TokenConfig(base *rest.Config, token string) *rest.Config {
	cfg := rest.AnonymousClientConfig(base)
	cfg.BearerToken = token
	return cfg
}

// CertConfig is a client config for the cluster of base that authenticates
// with the client certificate only.
func CertConfig(base *rest.Config, certPEM, keyPEM []byte) *rest.Config {
	cfg := rest.AnonymousClientConfig(base)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg
}

// WhoAmI returns the user the config authenticates as (SelfSubjectReview).
func WhoAmI(ctx context.Context, cfg *rest.Config) (authenticationv1.UserInfo, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("SelfSubjectReview: %w", err)
	}
	return r.Status.UserInfo, nil
}

// KubeletCertificate is what a kubelet's certificate request produced.
type KubeletCertificate struct {
	// CSRName is the request's name.
	CSRName string
	// CertPEM and KeyPEM are the issued certificate and its private key.
	CertPEM, KeyPEM []byte
}

// RequestKubeletClientCertificate does what a kubelet does to get a client
// certificate, as the identity of cfg (a bootstrap token, or the node's own
// certificate for a renewal): it files a request for
// system:node:<node> in system:nodes (ECDSA key, usages digital signature
// and client auth, signer kubernetes.io/kube-apiserver-client-kubelet) and
// waits, at most timeout, for the certificate. Nothing approves it here:
// the approving controller must.
func RequestKubeletClientCertificate(ctx context.Context, cfg *rest.Config, node string, timeout time.Duration) (*KubeletCertificate, error) {
	req, err := newKubeletRequest(node, nil, nil)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, req.csrPEM, "", certv1.KubeAPIServerClientKubeletSignerName, nil,
		[]certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}, req.key)
	if err != nil {
		return nil, err
	}
	return req.wait(ctx, client, name, uid, timeout)
}

// FileKubeletServingRequest files, as the identity of cfg (the node), the
// request a kubelet files for its serving certificate: system:node:<node>
// in system:nodes with the given SANs, usages digital signature and server
// auth, signer kubernetes.io/kubelet-serving. Nothing approves such a
// request automatically; ApproveCSR does it by hand, and
// WaitForKubeletServingCertificate waits for the signature.
func FileKubeletServingRequest(ctx context.Context, cfg *rest.Config, node string, dnsNames []string, ips []net.IP) (*PendingRequest, error) {
	req, err := newKubeletRequest(node, dnsNames, ips)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, req.csrPEM, "", certv1.KubeletServingSignerName, nil,
		[]certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth}, req.key)
	if err != nil {
		return nil, err
	}
	return &PendingRequest{Name: name, uid: uid, client: client, req: req}, nil
}

// PendingRequest is a filed request not yet signed.
type PendingRequest struct {
	Name   string
	uid    types.UID
	client kubernetes.Interface
	req    *kubeletRequest
}

// Wait waits, at most timeout, for the request's certificate.
func (p *PendingRequest) Wait(ctx context.Context, timeout time.Duration) (*KubeletCertificate, error) {
	return p.req.wait(ctx, p.client, p.Name, p.uid, timeout)
}

// ApproveCSR approves the named request as kubectl certificate approve does.
func ApproveCSR(ctx context.Context, client kubernetes.Interface, name string) error {
	c, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve.",
	})
	_, err = client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, c, metav1.UpdateOptions{})
	return err
}

// ApprovalOf returns the request's Approved condition, if any.
func ApprovalOf(ctx context.Context, client kubernetes.Interface, name string) (*certv1.CertificateSigningRequestCondition, error) {
	c, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(c.Status.Conditions, func(c certv1.CertificateSigningRequestCondition) bool {
		return c.Type == certv1.CertificateApproved
	})
	if i < 0 {
		return nil, nil
	}
	return &c.Status.Conditions[i], nil
}

// kubeletRequest is a PKCS#10 request and its key.
type kubeletRequest struct {
	key    *ecdsa.PrivateKey
	csrPEM []byte
}

func newKubeletRequest(node string, dnsNames []string, ips []net.IP) (*kubeletRequest, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	subject := &pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}
	csrPEM, err := certutil.MakeCSR(key, subject, dnsNames, ips)
	if err != nil {
		return nil, err
	}
	return &kubeletRequest{key: key, csrPEM: csrPEM}, nil
}

func (r *kubeletRequest) wait(ctx context.Context, client kubernetes.Interface, name string, uid types.UID, timeout time.Duration) (*KubeletCertificate, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(ctx, client, name, uid)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("CSR %s not approved and signed within %v: %w", name, timeout, err)
		}
		return nil, fmt.Errorf("CSR %s: %w", name, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(r.key)
	if err != nil {
		return nil, err
	}
	return &KubeletCertificate{CSRName: name, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// WaitForCSRSigning waits, at most timeout, until the controller manager
// signs requests: a controller manager that took its lease goes on
// starting controllers for seconds, and starts its informers last. It
// files a kube-apiserver-client request, approves it and waits for the
// certificate, then deletes the request.
func WaitForCSRSigning(ctx context.Context, client kubernetes.Interface, timeout time.Duration) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	csrPEM, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "e2e-signing-probe"}, nil, nil)
	if err != nil {
		return err
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, "", certv1.KubeAPIServerClientSignerName, nil,
		[]certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}, key)
	if err != nil {
		return err
	}
	defer func() {
		_ = client.CertificatesV1().CertificateSigningRequests().Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})
	}()
	if err := ApproveCSR(ctx, client, name); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := csr.WaitForCertificate(wctx, client, name, uid); err != nil {
		return fmt.Errorf("the controller manager did not sign a request within %v: %w", timeout, err)
	}
	return nil
}
