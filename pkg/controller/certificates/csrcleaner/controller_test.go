package csrcleaner

import (
	"context"
	"slices"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

// TestRun: at start the cleaner deletes what is past its deadline; an hour
// later on the fake clock, what has passed it since.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	clk := testingclock.NewFakeClock(start)
	created := csrtest.CreatedAt(start.Add(-time.Minute))
	client := fake.NewClientset(
		csrtest.CSR("old-denied", certv1.KubeAPIServerClientSignerName, nil, created, csrtest.WithCondition(certv1.CertificateDenied, start.Add(-2*time.Hour))),
		csrtest.CSR("new-denied", certv1.KubeAPIServerClientSignerName, nil, created, csrtest.WithCondition(certv1.CertificateDenied, start.Add(-30*time.Minute))),
		csrtest.CSR("pending", certv1.KubeAPIServerClientSignerName, nil, created),
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	c := newController("csrcleaner", client, factory.Certificates().V1().CertificateSigningRequests(), clk, PollingInterval)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	remaining := func() []string {
		list, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		return names
	}
	waitFor := func(want ...string) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return slices.Equal(remaining(), want), nil
		}); err != nil {
			t.Fatalf("remaining %v, want %v", remaining(), want)
		}
	}
	waitFor("new-denied", "pending")
	// Steps of the fake clock fire the ticker once it exists.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return clk.HasWaiters(), nil
	}); err != nil {
		t.Fatal("the cleaner does not wait on its ticker")
	}
	clk.Step(PollingInterval)
	waitFor("pending")
	clk.Step(23 * time.Hour) // one tick, however far the clock jumps
	waitFor()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
