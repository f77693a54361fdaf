package csrsigning

import (
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

const legacyUnknown = "kubernetes.io/legacy-unknown"

var (
	ds = certv1.UsageDigitalSignature
	ke = certv1.UsageKeyEncipherment
	sa = certv1.UsageServerAuth
	ca = certv1.UsageClientAuth
)

// newTestController signs for all four signers with one CA, on a fake
// clock, against a fake clientset holding objs.
func newTestController(t *testing.T, caNotAfter time.Time, objs ...*certv1.CertificateSigningRequest) (*Controller, *fake.Clientset, *testingclock.FakeClock) {
	t.Helper()
	caCert, caKey := csrtest.NewCA(t, "test-ca", caNotAfter).WriteFiles(t, t.TempDir())
	client := fake.NewClientset()
	for _, o := range objs {
		if err := client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	clk := testingclock.NewFakeClock(time.Now().Truncate(time.Second))
	var files []signerFiles
	for _, s := range []string{certv1.KubeletServingSignerName, certv1.KubeAPIServerClientKubeletSignerName, certv1.KubeAPIServerClientSignerName, legacyUnknown} {
		files = append(files, signerFiles{signerName: s, certFile: caCert, keyFile: caKey})
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController("csrsigning", client, factory.Certificates().V1().CertificateSigningRequests(), files, 365*24*time.Hour, clk)
	if err != nil {
		t.Fatal(err)
	}
	return c, client, clk
}

func nodeRequest(t *testing.T, dns ...string) []byte {
	p, _ := csrtest.Request{CommonName: "system:node:n1", Organizations: []string{"system:nodes"}, DNSNames: dns}.PEM(t)
	return p
}

func TestHandle(t *testing.T) {
	now := time.Now()
	user, _ := csrtest.Request{CommonName: "jane", Organizations: []string{"devs"}}.PEM(t)
	withSAN := nodeRequest(t, "n1.example")
	noSAN := nodeRequest(t)
	approved := csrtest.Approved(now)
	usages := csrtest.WithUsages
	tests := []struct {
		name       string
		csr        *certv1.CertificateSigningRequest
		wantFailed string // the Failed condition's message; "" means signed
	}{
		{"apiserver client", csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, user, approved, usages(ds, ke, ca)), ""},
		{"apiserver client, server auth", csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, user, approved, usages(ca, sa)), "invalid usage for client certificate: server auth"},
		{"apiserver client, no client auth", csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, user, approved, usages(ds)), "missing required usage for client certificate: client auth"},
		{"kubelet client", csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, noSAN, approved, usages(ds, ca)), ""},
		{"kubelet client, wrong subject", csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, user, approved, usages(ds, ca)), "subject organization is not system:nodes"},
		{"kubelet client, DNS SAN", csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, withSAN, approved, usages(ds, ca)), "DNS subjectAltNames are not allowed"},
		{"kubelet serving", csrtest.CSR("a", certv1.KubeletServingSignerName, withSAN, approved, usages(ds, ke, sa)), ""},
		{"kubelet serving, no SAN", csrtest.CSR("a", certv1.KubeletServingSignerName, noSAN, approved, usages(ds, sa)), "DNS or IP subjectAltName is required"},
		{"kubelet serving, client usages", csrtest.CSR("a", certv1.KubeletServingSignerName, withSAN, approved, usages(ds, ca)), "usages did not match [digital signature key encipherment server auth]"},
		{"legacy-unknown: anything goes", csrtest.CSR("a", legacyUnknown, user, approved, usages(sa, ca, certv1.UsageCodeSigning)), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, client, clk := newTestController(t, zeroTime, tc.csr)
			if !c.wants(tc.csr) {
				t.Fatal("the controller does not want the request")
			}
			if err := c.handle(ctx, tc.csr.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			got, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantFailed == "" {
				if len(got.Status.Certificate) == 0 || len(got.Status.Conditions) != 1 {
					t.Fatalf("not signed: %+v", got.Status)
				}
				return
			}
			if len(got.Status.Certificate) != 0 || len(got.Status.Conditions) != 2 {
				t.Fatalf("status = %+v, want a Failed condition and no certificate", got.Status)
			}
			cond := got.Status.Conditions[1]
			if cond.Type != certv1.CertificateFailed || cond.Status != "True" || cond.Reason != "SignerValidationFailure" ||
				cond.Message != tc.wantFailed || !cond.LastUpdateTime.Time.Equal(clk.Now()) {
				t.Errorf("condition = %+v, want Failed/True/SignerValidationFailure %q at %v", cond, tc.wantFailed, clk.Now())
			}
		})
	}
}

func TestWants(t *testing.T) {
	now := time.Now()
	req := nodeRequest(t, "n1")
	c, _, _ := newTestController(t, zeroTime)
	c.signers = map[string]*signer{certv1.KubeletServingSignerName: c.signers[certv1.KubeletServingSignerName]}
	for _, tc := range []struct {
		name string
		opts []csrtest.Option
		want bool
	}{
		{"pending", nil, false},
		{"approved", []csrtest.Option{csrtest.Approved(now)}, true},
		{"denied", []csrtest.Option{csrtest.WithCondition(certv1.CertificateDenied, now)}, false},
		{"approved and denied", []csrtest.Option{csrtest.Approved(now), csrtest.WithCondition(certv1.CertificateDenied, now)}, false},
		{"approved and failed", []csrtest.Option{csrtest.Approved(now), csrtest.WithCondition(certv1.CertificateFailed, now)}, false},
	} {
		if got := c.wants(csrtest.CSR("a", certv1.KubeletServingSignerName, req, tc.opts...)); got != tc.want {
			t.Errorf("%s: wants = %v, want %v", tc.name, got, tc.want)
		}
	}
	if c.wants(csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, req, csrtest.Approved(now))) {
		t.Error("wants a request of a signer that is not configured")
	}
	if c.wants(csrtest.CSR("a", "example.com/other", req, csrtest.Approved(now))) {
		t.Error("wants a request of a foreign signer")
	}
}

// TestHandleLifetime: spec.expirationSeconds is honoured within the
// signing duration; ten years is capped to it.
func TestHandleLifetime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	req := nodeRequest(t)
	for _, tc := range []struct {
		exp  int32
		want time.Duration
	}{
		{3600, time.Hour + 5*time.Minute},            // short-lived: only NotBefore backdated
		{10 * 365 * 24 * 3600, 365 * 24 * time.Hour}, // capped to --cluster-signing-duration
	} {
		csr := csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, req, csrtest.Approved(time.Now()),
			csrtest.WithUsages(ds, ca), csrtest.WithExpirationSeconds(tc.exp))
		c, client, _ := newTestController(t, zeroTime, csr)
		if err := c.handle(ctx, csr.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		got, _ := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "a", metav1.GetOptions{})
		cert := csrtest.ParseCertificate(t, got.Status.Certificate)
		if d := cert.NotAfter.Sub(cert.NotBefore); d != tc.want {
			t.Errorf("expirationSeconds %d: validity %v, want %v", tc.exp, d, tc.want)
		}
	}
}

// TestHandleErrors: an expired CA is retried (the file may be replaced);
// a request that does not parse is dropped; neither writes anything.
func TestHandleErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	req := nodeRequest(t)
	good := csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, req, csrtest.Approved(time.Now()), csrtest.WithUsages(ds, ca))

	c, client, _ := newTestController(t, time.Now().Add(time.Minute), good)
	c.clock.(*testingclock.FakeClock).Step(time.Hour)
	err := c.handle(ctx, good.DeepCopy())
	if err == nil || controller.IsPermanent(err) || !strings.Contains(err.Error(), "the signer has expired") {
		t.Errorf("expired CA: error = %v, want a retryable one", err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("expired CA: %d API calls", n)
	}

	garbage := good.DeepCopy()
	garbage.Spec.Request = []byte("garbage")
	tampered := good.DeepCopy()
	tampered.Spec.Request = append([]byte{}, req...)
	tampered.Spec.Request[len(req)/2] ^= 1 // a flipped bit in the base64 body
	for name, csr := range map[string]*certv1.CertificateSigningRequest{"garbage PEM": garbage, "tampered": tampered} {
		c, client, _ := newTestController(t, zeroTime, csr)
		if err := c.handle(ctx, csr.DeepCopy()); !controller.IsPermanent(err) {
			t.Errorf("%s: error = %v, want a permanent one", name, err)
		}
		if n := len(client.Actions()); n != 0 {
			t.Errorf("%s: %d API calls", name, n)
		}
	}
}

func TestNew(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	certFile, keyFile := csrtest.NewCA(t, "a", zeroTime).WriteFiles(t, dir)
	_, otherKey := csrtest.NewCA(t, "b", zeroTime).WriteFiles(t, t.TempDir())
	cc := func(cert, key string) *controllermanager.ControllerContext {
		cfg := &config.ComponentConfig{}
		cfg.CSRSigningController.ClusterSigningCertFile = cert
		cfg.CSRSigningController.ClusterSigningKeyFile = key
		cfg.CSRSigningController.ClusterSigningDuration = metav1.Duration{Duration: time.Hour}
		return &controllermanager.ControllerContext{
			ClientBuilder:   clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{Host: "https://127.0.0.1:6443"}},
			InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
			Config:          cfg,
		}
	}
	if got, err := New(ctx, cc("", ""), "csrsigning"); got != nil || err != nil {
		t.Errorf("without files: %v, %v; want not started", got, err)
	}
	got, err := New(ctx, cc(certFile, keyFile), "csrsigning")
	if err != nil {
		t.Fatal(err)
	}
	if c := got.(*Controller); len(c.signers) != 4 || c.maxTTL != time.Hour || c.Name() != "csrsigning" {
		t.Errorf("controller = %+v", c)
	}
	if _, err := New(ctx, cc(certFile, otherKey), "csrsigning"); err == nil || !strings.Contains(err.Error(), "failed to init kubernetes.io/kubelet-serving certificate controller") {
		t.Errorf("mismatched key: error = %v", err)
	}
}
