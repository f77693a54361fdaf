// Package podcertificaterequestcleaner tests the
// podcertificaterequest-cleaner-controller against a real kube-apiserver,
// on a fake clock that skips the 15 minutes.
package podcertificaterequestcleaner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/podcertificaterequestcleaner"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// createPCR creates a valid PodCertificateRequest: an empty PKCS#10 stub
// request signed with an Ed25519 key, as the kubelet files it.
func createPCR(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		t.Fatal(err)
	}
	podUID := types.UID("pod-uid-" + name)
	_, err = client.CertificatesV1().PodCertificateRequests(ns).Create(context.Background(), &certv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certv1.PodCertificateRequestSpec{
			SignerName:           "example.com/signer",
			PodName:              "pod",
			PodUID:               podUID,
			ServiceAccountName:   "default",
			ServiceAccountUID:    "sa-uid",
			NodeName:             "node",
			NodeUID:              "node-uid",
			MaxExpirationSeconds: ptr.To[int32](86400),
			StubPKCS10Request:    stub,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRequestsDeletedAfter15Minutes(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pcr-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createPCR(t, client, ns.Name, "first")

	clk := testingclock.NewFakeClock(time.Now())
	cc := framework.NewControllerContext(t, cfg)
	cc.Clock = clk
	c, err := podcertificaterequestcleaner.New(ctx, cc, names.PodCertificateRequestCleaner)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != names.PodCertificateRequestCleaner {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	createPCR(t, client, ns.Name, "second")

	exists := func(name string) bool {
		_, err := client.CertificatesV1().PodCertificateRequests(ns.Name).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	framework.Consistently(t, 2*time.Second, "requests kept while young", func() bool { return exists("first") && exists("second") })
	// The server stamped creation with its own clock (this machine's);
	// 15 minutes and a few seconds later on the fake clock both are due.
	clk.Step(podcertificaterequestcleaner.MaxAge + 5*time.Second)
	framework.Eventually(t, timeout, func() (bool, error) { return !exists("first") && !exists("second"), nil })
}
