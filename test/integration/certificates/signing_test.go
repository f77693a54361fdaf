package certificates

import (
	"context"
	"crypto/x509"
	"slices"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrsigning"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const signingDuration = 24 * time.Hour

var (
	ds = certv1.UsageDigitalSignature
	ke = certv1.UsageKeyEncipherment
	sa = certv1.UsageServerAuth
	ca = certv1.UsageClientAuth
)

// startSigner runs the signing controller with the CA files.
func startSigner(t *testing.T, cfg *rest.Config, certFile, keyFile string) {
	t.Helper()
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.CSRSigningController.ClusterSigningCertFile = certFile
	cc.Config.CSRSigningController.ClusterSigningKeyFile = keyFile
	cc.Config.CSRSigningController.ClusterSigningDuration = metav1.Duration{Duration: signingDuration}
	c, err := csrsigning.New(context.Background(), cc, names.CertificateSigningRequestSigning)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
}

func nodeRequest(node string, dns ...string) csrtest.Request {
	return csrtest.Request{CommonName: "system:node:" + node, Organizations: []string{"system:nodes"}, DNSNames: dns}
}

// TestSigning: each built-in signer issues approved requests that meet its
// checks, with upstream's lifetimes; a request that fails them is marked
// Failed; denied, pending and foreign requests are left alone.
func TestSigning(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	authority := csrtest.NewCA(t, "signing-ca", time.Time{})
	certFile, keyFile := authority.WriteFiles(t, t.TempDir())
	startSigner(t, cfg, certFile, keyFile)

	user := csrtest.Request{CommonName: "jane", Organizations: []string{"devs"}}
	create(t, client, "sign-client", certv1.KubeAPIServerClientSignerName, user, []certv1.KeyUsage{ds, ke, ca})
	create(t, client, "sign-client-10y", certv1.KubeAPIServerClientSignerName, user, []certv1.KeyUsage{ca}, csrtest.WithExpirationSeconds(10*365*24*3600))
	create(t, client, "sign-serving-1h", certv1.KubeletServingSignerName, nodeRequest("n1", "n1.example"), []certv1.KeyUsage{ds, sa}, csrtest.WithExpirationSeconds(3600))
	create(t, client, "sign-kubelet", certv1.KubeAPIServerClientKubeletSignerName, nodeRequest("n1"), []certv1.KeyUsage{ds, ca})
	create(t, client, "sign-bad-usage", certv1.KubeAPIServerClientSignerName, user, []certv1.KeyUsage{ca, sa})
	create(t, client, "sign-serving-no-san", certv1.KubeletServingSignerName, nodeRequest("n1"), []certv1.KeyUsage{ds, sa})
	create(t, client, "sign-denied", certv1.KubeAPIServerClientSignerName, user, []certv1.KeyUsage{ca})
	create(t, client, "sign-pending", certv1.KubeAPIServerClientSignerName, user, []certv1.KeyUsage{ca})
	create(t, client, "sign-foreign", "example.com/signer", user, []certv1.KeyUsage{ca})
	deleteAtCleanup(t, client, "sign-client", "sign-client-10y", "sign-serving-1h", "sign-kubelet", "sign-bad-usage",
		"sign-serving-no-san", "sign-denied", "sign-pending", "sign-foreign")
	for _, n := range []string{"sign-client", "sign-client-10y", "sign-serving-1h", "sign-kubelet", "sign-bad-usage", "sign-serving-no-san", "sign-foreign"} {
		decide(t, client, n, certv1.CertificateApproved)
	}
	decide(t, client, "sign-denied", certv1.CertificateDenied)

	for _, tc := range []struct {
		name     string
		validity time.Duration
		ext      []x509.ExtKeyUsage
		ku       x509.KeyUsage
	}{
		{"sign-client", signingDuration, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment},
		{"sign-client-10y", signingDuration, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, 0},
		{"sign-serving-1h", time.Hour + 5*time.Minute, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, x509.KeyUsageDigitalSignature},
		{"sign-kubelet", signingDuration, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, x509.KeyUsageDigitalSignature},
	} {
		cert := waitForCertificate(t, client, tc.name)
		if err := cert.CheckSignatureFrom(authority.Cert); err != nil {
			t.Errorf("%s: not signed by the CA: %v", tc.name, err)
		}
		if d := cert.NotAfter.Sub(cert.NotBefore); d != tc.validity {
			t.Errorf("%s: valid for %v, want %v", tc.name, d, tc.validity)
		}
		if since := time.Since(cert.NotBefore); since < 5*time.Minute-10*time.Second || since > 5*time.Minute+timeout {
			t.Errorf("%s: NotBefore %v is not backdated by 5 minutes", tc.name, cert.NotBefore)
		}
		if !slices.Equal(cert.ExtKeyUsage, tc.ext) || cert.KeyUsage != tc.ku || cert.IsCA {
			t.Errorf("%s: usages %v %b, CA %v", tc.name, cert.ExtKeyUsage, cert.KeyUsage, cert.IsCA)
		}
	}

	failed := func(name, message string) {
		t.Helper()
		csr := waitFor(t, client, name, func(c *certv1.CertificateSigningRequest) bool {
			_, ok := condition(c, certv1.CertificateFailed)
			return ok
		})
		cond, _ := condition(csr, certv1.CertificateFailed)
		if cond.Status != "True" || cond.Reason != "SignerValidationFailure" || cond.Message != message || cond.LastTransitionTime.IsZero() || issued(csr) {
			t.Errorf("%s: Failed condition %+v, certificate %d bytes; want SignerValidationFailure %q", name, cond, len(csr.Status.Certificate), message)
		}
	}
	failed("sign-bad-usage", "invalid usage for client certificate: server auth")
	failed("sign-serving-no-san", "DNS or IP subjectAltName is required")

	framework.Consistently(t, 2*time.Second, "denied, pending and foreign requests stay unsigned", func() bool {
		for _, n := range []string{"sign-denied", "sign-pending", "sign-foreign"} {
			csr, err := client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), n, metav1.GetOptions{})
			if err != nil || issued(csr) {
				return false
			}
			if _, failed := condition(csr, certv1.CertificateFailed); failed {
				return false
			}
		}
		return true
	})
}

// TestSigningCAReplacedOnDisk: a new CA written over the files signs the
// next request; a truncated replacement leaves the last good CA signing.
func TestSigningCAReplacedOnDisk(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	dir := t.TempDir()
	first, second := csrtest.NewCA(t, "first", time.Time{}), csrtest.NewCA(t, "second", time.Time{})
	certFile, keyFile := first.WriteFiles(t, dir)
	startSigner(t, cfg, certFile, keyFile)

	sign := func(name string) *x509.Certificate {
		t.Helper()
		create(t, client, name, certv1.KubeAPIServerClientSignerName, csrtest.Request{CommonName: name}, []certv1.KeyUsage{ca})
		deleteAtCleanup(t, client, name)
		decide(t, client, name, certv1.CertificateApproved)
		return waitForCertificate(t, client, name)
	}
	if got := sign("rotate-1").Issuer.CommonName; got != "first" {
		t.Fatalf("issuer %q, want first", got)
	}
	second.WriteFiles(t, dir)
	if got := sign("rotate-2").Issuer.CommonName; got != "second" {
		t.Fatalf("after rotation: issuer %q, want second", got)
	}
	csrtest.WriteFile(t, certFile, second.CertPEM[:len(second.CertPEM)/2])
	if got := sign("rotate-3").Issuer.CommonName; got != "second" {
		t.Fatalf("after a truncated replacement: issuer %q, want second (the last good CA)", got)
	}
}
