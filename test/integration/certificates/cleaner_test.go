package certificates

import (
	"context"
	"slices"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrcleaner"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestCleaner runs the cleaner on a fake clock over requests whose
// conditions the API server timestamped: nothing goes before its time;
// an hour on, denied, failed and issued requests go; a day on, pending and
// approved-but-unissued ones.
func TestCleaner(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	authority := csrtest.NewCA(t, "signing-ca", time.Time{})
	certFile, keyFile := authority.WriteFiles(t, t.TempDir())
	startSigner(t, cfg, certFile, keyFile)

	user := csrtest.Request{CommonName: "jane"}
	all := []string{"clean-issued", "clean-denied", "clean-failed", "clean-pending", "clean-unissued"}
	deleteAtCleanup(t, client, all...)
	for _, n := range all {
		signer := certv1.KubeAPIServerClientSignerName
		if n == "clean-unissued" {
			signer = "example.com/nobody" // approved, never signed
		}
		usages := []certv1.KeyUsage{ca}
		if n == "clean-failed" {
			usages = []certv1.KeyUsage{sa}
		}
		create(t, client, n, signer, user, usages)
	}
	for _, n := range []string{"clean-issued", "clean-failed", "clean-unissued"} {
		decide(t, client, n, certv1.CertificateApproved)
	}
	decide(t, client, "clean-denied", certv1.CertificateDenied)
	waitFor(t, client, "clean-issued", issued)
	waitFor(t, client, "clean-failed", func(c *certv1.CertificateSigningRequest) bool {
		_, ok := condition(c, certv1.CertificateFailed)
		return ok
	})

	clk := testingclock.NewFakeClock(time.Now())
	cc := framework.NewControllerContext(t, cfg)
	cc.Clock = clk
	c, err := csrcleaner.New(context.Background(), cc, names.CertificateSigningRequestCleaner)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)

	remaining := func() []string {
		var left []string
		for _, n := range all {
			_, err := client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), n, metav1.GetOptions{})
			if err == nil {
				left = append(left, n)
			} else if !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		return left
	}
	// The first pass runs at start and deletes nothing. Steps of the fake
	// clock fire the cleaner's ticker once it exists.
	framework.Eventually(t, timeout, func() (bool, error) { return clk.HasWaiters(), nil })
	framework.Consistently(t, time.Second, "nothing is deleted before its time", func() bool {
		return slices.Equal(remaining(), all)
	})
	step := func(d time.Duration, want ...string) {
		t.Helper()
		clk.Step(d)
		framework.Eventually(t, timeout, func() (bool, error) { return slices.Equal(remaining(), want), nil })
	}
	step(csrcleaner.PollingInterval+time.Minute, "clean-pending", "clean-unissued")
	step(csrcleaner.PendingExpiration)
}
