package csrapproving

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

var (
	ds = certv1.UsageDigitalSignature
	ke = certv1.UsageKeyEncipherment
	ca = certv1.UsageClientAuth
	sa = certv1.UsageServerAuth
)

// newTestController answers SubjectAccessReviews with allowed(subresource,
// review) and records the subresources asked about.
func newTestController(t *testing.T, allowed func(string) bool, objs ...runtime.Object) (*Controller, *fake.Clientset, *[]string, informers.SharedInformerFactory) {
	t.Helper()
	client := fake.NewClientset(objs...)
	var asked []string
	client.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		attrs := sar.Spec.ResourceAttributes
		if attrs.Group != "certificates.k8s.io" || attrs.Resource != "certificatesigningrequests" || attrs.Verb != "create" || attrs.Version != "*" {
			t.Errorf("unexpected review attributes %+v", attrs)
		}
		asked = append(asked, attrs.Subresource)
		sar.Status.Allowed = allowed(attrs.Subresource)
		return true, sar, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController("csrapproving", client, factory.Certificates().V1().CertificateSigningRequests())
	if err != nil {
		t.Fatal(err)
	}
	return c, client, &asked, factory
}

func kubeletClientRequest(t *testing.T, cn string, dns ...string) []byte {
	p, _ := csrtest.Request{CommonName: cn, Organizations: []string{"system:nodes"}, DNSNames: dns}.PEM(t)
	return p
}

func TestHandle(t *testing.T) {
	node := kubeletClientRequest(t, "system:node:n1")
	withDNS := kubeletClientRequest(t, "system:node:n1", "n1")
	bootstrapper := csrtest.WithRequester("system:bootstrap:abcdef", "system:bootstrappers", "system:authenticated")
	self := csrtest.WithRequester("system:node:n1", "system:nodes", "system:authenticated")
	usages := csrtest.WithUsages
	const (
		selfMsg = "Auto approving self kubelet client certificate after SubjectAccessReview."
		nodeMsg = "Auto approving kubelet client certificate after SubjectAccessReview."
	)
	all := func(string) bool { return true }
	none := func(string) bool { return false }
	only := func(s string) func(string) bool { return func(x string) bool { return x == s } }
	tests := []struct {
		name      string
		csr       *certv1.CertificateSigningRequest
		allowed   func(string) bool
		wantAsked []string
		wantMsg   string // "" means not approved
		wantErr   bool
	}{
		{name: "bootstrap", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, bootstrapper, usages(ds, ca)),
			allowed: all, wantAsked: []string{"nodeclient"}, wantMsg: nodeMsg},
		{name: "renewal", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, self, usages(ds, ke, ca)),
			allowed: all, wantAsked: []string{"selfnodeclient"}, wantMsg: selfMsg},
		{name: "renewal without selfnodeclient falls back to nodeclient", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, self, usages(ds, ca)),
			allowed: only("nodeclient"), wantAsked: []string{"selfnodeclient", "nodeclient"}, wantMsg: nodeMsg},
		{name: "not allowed: retried", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, bootstrapper, usages(ds, ca)),
			allowed: none, wantAsked: []string{"nodeclient"}, wantErr: true},
		{name: "another node's name is no renewal", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, csrtest.WithRequester("system:node:n2", "system:nodes"), usages(ds, ca)),
			allowed: only("selfnodeclient"), wantAsked: []string{"nodeclient"}, wantErr: true},
		{name: "not a kubelet client request: DNS SAN", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, withDNS, bootstrapper, usages(ds, ca)),
			allowed: all},
		{name: "not a kubelet client request: usages", csr: csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, node, bootstrapper, usages(ds, sa)),
			allowed: all},
		{name: "another signer", csr: csrtest.CSR("a", certv1.KubeletServingSignerName, withDNS, self, usages(ds, sa)),
			allowed: all},
		{name: "client signer", csr: csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, node, self, usages(ds, ca)),
			allowed: all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, client, asked, _ := newTestController(t, tc.allowed, tc.csr)
			err := c.handle(ctx, tc.csr.DeepCopy())
			if (err != nil) != tc.wantErr || controller.IsPermanent(err) {
				t.Fatalf("error = %v, want error %v (retryable)", err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "but subject access review was not approved") {
				t.Errorf("error = %v", err)
			}
			if strings.Join(*asked, ",") != strings.Join(tc.wantAsked, ",") {
				t.Errorf("reviews asked %v, want %v", *asked, tc.wantAsked)
			}
			got, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantMsg == "" {
				if len(got.Status.Conditions) != 0 {
					t.Errorf("conditions = %+v, want none", got.Status.Conditions)
				}
				return
			}
			want := certv1.CertificateSigningRequestCondition{Type: certv1.CertificateApproved, Status: "True", Reason: "AutoApproved", Message: tc.wantMsg}
			if len(got.Status.Conditions) != 1 || got.Status.Conditions[0] != want {
				t.Errorf("conditions = %+v, want %+v", got.Status.Conditions, want)
			}
		})
	}
}

// TestReviewCarriesRequester: the review asks about the request's author,
// with its uid, groups and extra.
func TestReviewCarriesRequester(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	csr := csrtest.CSR("a", certv1.KubeAPIServerClientKubeletSignerName, kubeletClientRequest(t, "system:node:n1"),
		csrtest.WithRequester("system:bootstrap:abcdef", "system:bootstrappers"), csrtest.WithUsages(ds, ca))
	csr.Spec.UID = "u-1"
	csr.Spec.Extra = map[string]certv1.ExtraValue{"k": {"v"}}
	c, client, _, _ := newTestController(t, func(string) bool { return true }, csr)
	if err := c.handle(ctx, csr.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var sar *authorizationv1.SubjectAccessReview
	for _, a := range client.Actions() {
		if a.Matches("create", "subjectaccessreviews") {
			sar = a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		}
	}
	if sar == nil {
		t.Fatal("no review")
	}
	s := sar.Spec
	if s.User != "system:bootstrap:abcdef" || s.UID != "u-1" || len(s.Groups) != 1 || s.Groups[0] != "system:bootstrappers" || s.Extra["k"][0] != "v" {
		t.Errorf("review spec = %+v", s)
	}
}

// TestRun: a bootstrap request is approved through the informer; decided
// and issued ones are not looked at.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := kubeletClientRequest(t, "system:node:n1")
	opts := []csrtest.Option{csrtest.WithRequester("system:bootstrap:x", "system:bootstrappers"), csrtest.WithUsages(ds, ca)}
	c, client, asked, factory := newTestController(t, func(string) bool { return true },
		csrtest.CSR("new", certv1.KubeAPIServerClientKubeletSignerName, req, opts...),
		csrtest.CSR("denied", certv1.KubeAPIServerClientKubeletSignerName, req, append(opts, csrtest.WithCondition(certv1.CertificateDenied, time.Now()))...),
		csrtest.CSR("issued", certv1.KubeAPIServerClientKubeletSignerName, req, append(opts, csrtest.WithCertificate([]byte("x")))...),
	)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "new", metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) == 1, err
	}); err != nil {
		t.Fatalf("not approved: %v", err)
	}
	cancel()
	<-done
	if len(*asked) != 1 {
		t.Errorf("reviews %v, want one (for the new request only)", *asked)
	}
}
