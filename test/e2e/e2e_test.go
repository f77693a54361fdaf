package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/test/cluster"
)

func poll(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestKubeadmCommandLine is the acceptance check: with kubeadm's
// command line, a new namespace gets its default ServiceAccount and the
// kube-root-ca.crt ConfigMap within 2 seconds once the controllers run;
// /healthz answers anonymously;
// SIGTERM stops the process cleanly and releases the Lease.
func TestKubeadmCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           t.TempDir(),
		ControllerManager: cluster.ControllerManagerOptions{Binary: cluster.OurControllerManager},
		Logf:              t.Logf,
	})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.WaitForControllerManagerLeader(ctx); err != nil {
		t.Fatal(err)
	}

	// The 2 seconds are the steady state's: first let the controllers start
	// (informers synced), which a loaded machine can take longer for.
	warm, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "warm-up"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, time.Minute, "default ServiceAccount and kube-root-ca.crt in warm-up", func() bool {
		_, saErr := c.Client.CoreV1().ServiceAccounts(warm.Name).Get(ctx, "default", metav1.GetOptions{})
		_, cmErr := c.Client.CoreV1().ConfigMaps(warm.Name).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return saErr == nil && cmErr == nil
	})
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 2*time.Second, "default ServiceAccount and kube-root-ca.crt in x", func() bool {
		_, saErr := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		cm, cmErr := c.Client.CoreV1().ConfigMaps(ns.Name).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return saErr == nil && cmErr == nil && cm.Data["ca.crt"] != ""
	})

	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", c.Ports.ControllerManager))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("anonymous /healthz = %d, want 200", resp.StatusCode)
	}

	if err := c.StopControllerManager(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	lease, err := c.Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the Lease is still held by %q after SIGTERM; kcm releases it", *h)
	}
}
