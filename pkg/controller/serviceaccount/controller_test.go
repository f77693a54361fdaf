package serviceaccount

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func TestEventHandlersEnqueue(t *testing.T) {
	sa := serviceAccount("ns1", "default")
	tests := []struct {
		name string
		fire func(c *Controller, logger klog.Logger)
		want string
	}{
		{name: "namespace added", fire: func(c *Controller, _ klog.Logger) { c.enqueueNamespace(namespace("ns1", v1.NamespaceActive)) }, want: "ns1"},
		{name: "terminating namespace updated", fire: func(c *Controller, _ klog.Logger) { c.enqueueNamespace(namespace("ns1", v1.NamespaceTerminating)) }, want: "ns1"},
		{name: "ServiceAccount deleted", fire: func(c *Controller, logger klog.Logger) { c.serviceAccountDeleted(logger, sa) }, want: "ns1"},
		{name: "ServiceAccount tombstone", fire: func(c *Controller, logger klog.Logger) {
			c.serviceAccountDeleted(logger, cache.DeletedFinalStateUnknown{Key: "ns1/default", Obj: sa})
		}, want: "ns1"},
		{name: "bad tombstone", fire: func(c *Controller, logger klog.Logger) {
			c.serviceAccountDeleted(logger, cache.DeletedFinalStateUnknown{Key: "x", Obj: "x"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			c, _ := newTestController(t)
			tc.fire(c, logger)
			if tc.want == "" {
				if n := c.queue.Len(); n != 0 {
					t.Fatalf("queue has %d keys, want none", n)
				}
				return
			}
			if n := c.queue.Len(); n != 1 {
				t.Fatalf("queue has %d keys, want 1", n)
			}
			if key, _ := c.queue.Get(); key != tc.want {
				t.Errorf("queued %q, want %q", key, tc.want)
			}
		})
	}
}

// TestRun drives the controller through informers: the default
// ServiceAccount is created, created again after a deletion, and Run returns
// after cancellation.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	client := fake.NewClientset(namespace("ns1", v1.NamespaceActive), namespace("gone", v1.NamespaceTerminating))
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "serviceaccount-controller", client,
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Namespaces())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	waitForDefault := func(ns string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("default ServiceAccount in %s: %v", ns, err)
		}
	}
	waitForDefault("ns1")
	if err := client.CoreV1().ServiceAccounts("ns1").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForDefault("ns1")
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace("ns2", v1.NamespaceActive), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForDefault("ns2")
	if _, err := client.CoreV1().ServiceAccounts("gone").Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("terminating namespace: got err %v, want NotFound", err)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

// TestRunReturnsBeforeCacheSync covers cancellation while the caches have
// not synced (the informers were never started).
func TestRunReturnsBeforeCacheSync(t *testing.T) {
	c, _ := newTestController(t)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
