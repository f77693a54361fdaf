package certificates

import (
	"context"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrapproving"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	nodeClientRole     = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	selfNodeClientRole = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
	bootstrapperRole   = "system:node-bootstrapper"
)

// TestApproving: kubelet client requests are approved after a
// SubjectAccessReview, with upstream's condition, and then signed: a
// bootstrap by a token's group allowed nodeclient, a renewal by the node
// allowed selfnodeclient. A requester without the permission stays pending
// until it is granted; a serving request is never auto-approved.
func TestApproving(t *testing.T) {
	cfg := framework.StartEnv(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	certFile, keyFile := csrtest.NewCA(t, "signing-ca", time.Time{}).WriteFiles(t, t.TempDir())
	startSigner(t, cfg, certFile, keyFile)
	cc := framework.NewControllerContext(t, cfg)
	c, err := csrapproving.New(context.Background(), cc, names.CertificateSigningRequestApproving)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)

	// kubeadm's bindings, for a token group and for nodes (envtest runs
	// RBAC without the Node authorizer, so nodes need the bootstrapper role
	// to file requests).
	bind(t, admin, "test-bootstrap", bootstrapperRole, "system:bootstrappers:test")
	bind(t, admin, "test-autoapprove-bootstrap", nodeClientRole, "system:bootstrappers:test")
	bind(t, admin, "test-nodes-file", bootstrapperRole, "system:nodes")
	bind(t, admin, "test-autoapprove-rotation", selfNodeClientRole, "system:nodes")
	bind(t, admin, "test-strangers-file", bootstrapperRole, "strangers")

	bootstrap := as(t, cfg, "system:bootstrap:abcdef", "system:bootstrappers", "system:bootstrappers:test")
	node := as(t, cfg, "system:node:n1", "system:nodes")
	stranger := as(t, cfg, "mallory", "strangers")
	create(t, bootstrap, "approve-bootstrap", certv1.KubeAPIServerClientKubeletSignerName, nodeRequest("n1"), []certv1.KeyUsage{ds, ca})
	create(t, node, "approve-renewal", certv1.KubeAPIServerClientKubeletSignerName, nodeRequest("n1"), []certv1.KeyUsage{ds, ke, ca})
	create(t, stranger, "approve-stranger", certv1.KubeAPIServerClientKubeletSignerName, nodeRequest("n2"), []certv1.KeyUsage{ds, ca})
	create(t, node, "approve-serving", certv1.KubeletServingSignerName, nodeRequest("n1", "n1"), []certv1.KeyUsage{ds, sa})
	deleteAtCleanup(t, admin, "approve-bootstrap", "approve-renewal", "approve-stranger", "approve-serving")

	approvedWith := func(name, message string) {
		t.Helper()
		csr := waitFor(t, admin, name, issued)
		cond, ok := condition(csr, certv1.CertificateApproved)
		if !ok || cond.Status != "True" || cond.Reason != "AutoApproved" || cond.Message != message || cond.LastUpdateTime.IsZero() {
			t.Errorf("%s: Approved condition %+v, want AutoApproved %q", name, cond, message)
		}
		if cert := csrtest.ParseCertificate(t, csr.Status.Certificate); cert.Subject.CommonName != "system:node:n1" {
			t.Errorf("%s: subject %v", name, cert.Subject)
		}
	}
	approvedWith("approve-bootstrap", "Auto approving kubelet client certificate after SubjectAccessReview.")
	approvedWith("approve-renewal", "Auto approving self kubelet client certificate after SubjectAccessReview.")

	framework.Consistently(t, 2*time.Second, "the stranger's and the serving requests stay pending", func() bool {
		for _, n := range []string{"approve-stranger", "approve-serving"} {
			csr, err := admin.CertificatesV1().CertificateSigningRequests().Get(context.Background(), n, metav1.GetOptions{})
			if err != nil || len(csr.Status.Conditions) != 0 {
				return false
			}
		}
		return true
	})
	// The denied review is retried with backoff: a permission granted
	// later is honoured.
	bind(t, admin, "test-strangers-approve", nodeClientRole, "strangers")
	waitFor(t, admin, "approve-stranger", issued)
}
