package csrutil

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

// TestLoop: wanted requests without a certificate reach the handler as
// copies; issued and unwanted ones do not; a handler error is retried; Run
// returns after cancellation.
func TestLoop(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(
		csrtest.CSR("wanted", "example.com/x", nil),
		csrtest.CSR("issued", "example.com/x", nil, csrtest.WithCertificate([]byte("x"))),
		csrtest.CSR("other", "example.com/y", nil),
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	var mu sync.Mutex
	seen := map[string]int{}
	loop, err := NewLoop("test", factory.Certificates().V1().CertificateSigningRequests(),
		func(c *certv1.CertificateSigningRequest) bool { return c.Spec.SignerName == "example.com/x" },
		func(_ context.Context, c *certv1.CertificateSigningRequest) error {
			c.Labels = map[string]string{"touched": "yes"} // must not reach the cache
			mu.Lock()
			defer mu.Unlock()
			seen[c.Name]++
			if seen[c.Name] == 1 {
				return errors.New("first try fails")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); loop.Run(ctx, 2) }()
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return seen["wanted"] >= 2, nil
	}); err != nil {
		t.Fatalf("the wanted request was not retried: %v", seen)
	}
	mu.Lock()
	if seen["issued"] != 0 || seen["other"] != 0 {
		t.Errorf("handled %v, want only the wanted request", seen)
	}
	mu.Unlock()
	cached, err := loop.lister.Get("wanted")
	if err != nil || cached.Labels != nil {
		t.Errorf("the cached object was changed: %v %v", cached.Labels, err)
	}
	if _, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "wanted", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
