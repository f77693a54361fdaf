package rootcacertpublisher

import (
	"context"
	"maps"
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

func namespace(name string, phase v1.NamespacePhase) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NamespaceStatus{Phase: phase}}
}

func TestEventHandlersEnqueue(t *testing.T) {
	cm := configMap("ns1", nil, nil)
	other := cm.DeepCopy()
	other.Name = "other"
	tests := []struct {
		name string
		fire func(c *Controller, logger klog.Logger)
		want string
	}{
		{name: "namespace added", fire: func(c *Controller, _ klog.Logger) { c.namespaceAdded(namespace("ns1", v1.NamespaceActive)) }, want: "ns1"},
		{name: "active namespace updated", fire: func(c *Controller, _ klog.Logger) { c.namespaceUpdated(namespace("ns1", v1.NamespaceActive)) }, want: "ns1"},
		{name: "terminating namespace updated", fire: func(c *Controller, _ klog.Logger) { c.namespaceUpdated(namespace("ns1", v1.NamespaceTerminating)) }},
		{name: "ConfigMap changed", fire: func(c *Controller, logger klog.Logger) { c.configMapChanged(logger, cm) }, want: "ns1"},
		{name: "other ConfigMap changed", fire: func(c *Controller, logger klog.Logger) { c.configMapChanged(logger, other) }},
		{name: "ConfigMap tombstone", fire: func(c *Controller, logger klog.Logger) {
			c.configMapChanged(logger, cache.DeletedFinalStateUnknown{Key: "ns1/" + ConfigMapName, Obj: cm})
		}, want: "ns1"},
		{name: "bad tombstone", fire: func(c *Controller, logger klog.Logger) {
			c.configMapChanged(logger, cache.DeletedFinalStateUnknown{Key: "x", Obj: "x"})
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

// TestRun drives the controller through informers: the ConfigMap is
// published, restored after an edit and a deletion, and Run returns after
// cancellation.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	client := fake.NewClientset(namespace("ns1", v1.NamespaceActive))
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "root-ca-certificate-publisher-controller", client,
		factory.Core().V1().ConfigMaps(), factory.Core().V1().Namespaces(), []byte(testCA))
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

	waitForPublished := func(ns string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, ConfigMapName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return maps.Equal(cm.Data, correctData()) && cm.Annotations[DescriptionAnnotation] == Description, nil
		})
		if err != nil {
			t.Fatalf("ConfigMap in %s: %v", ns, err)
		}
	}
	waitForPublished("ns1")
	if _, err := client.CoreV1().ConfigMaps("ns1").Update(ctx, configMap("ns1", map[string]string{DataKey: "junk"}, nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished("ns1")
	if err := client.CoreV1().ConfigMaps("ns1").Delete(ctx, ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished("ns1")
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace("ns2", v1.NamespaceActive), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished("ns2")

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
