package ttl

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

func TestSync(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		nodes       int
		wantPatch   string
	}{
		{name: "no annotation", wantPatch: `{"metadata":{"annotations":{"node.alpha.kubernetes.io/ttl":"0"}}}`},
		{name: "up to date", annotations: map[string]string{v1.ObjectTTLAnnotationKey: "0"}},
		{name: "garbage", annotations: map[string]string{v1.ObjectTTLAnnotationKey: "x"}, wantPatch: `{"metadata":{"annotations":{"node.alpha.kubernetes.io/ttl":"0"}}}`},
		{name: "large cluster", annotations: map[string]string{v1.ObjectTTLAnnotationKey: "0"}, nodes: 101, wantPatch: `{"metadata":{"annotations":{"node.alpha.kubernetes.io/ttl":"15"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: tc.annotations}}
			client := fake.NewClientset(n)
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := newController(ctx, "ttl-controller", client, factory.Core().V1().Nodes())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.queue.ShutDown)
			if err := factory.Core().V1().Nodes().Informer().GetIndexer().Add(n); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.nodes; i++ {
				c.size.add()
			}
			if err := c.sync(ctx, "n1"); err != nil {
				t.Fatal(err)
			}
			if err := c.sync(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			var got string
			for _, a := range client.Actions() {
				if p, ok := a.(clienttesting.PatchAction); ok {
					got = string(p.GetPatch())
				}
			}
			if got != tc.wantPatch {
				t.Errorf("patch %q, want %q", got, tc.wantPatch)
			}
		})
	}
}

// TestStepChangeSweepsNodes: when the desired TTL changes, every cached
// node is queued, spread evenly over the sweep, not all at once.
func TestStepChangeSweepsNodes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "ttl-controller", client, factory.Core().V1().Nodes())
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(time.Now())
	c.queue.ShutDown()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Clock: clk})
	t.Cleanup(c.queue.ShutDown)
	c.sweep = 100 * time.Second
	indexer := factory.Core().V1().Nodes().Informer().GetIndexer()
	for i := range 4 {
		if err := indexer.Add(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	c.enqueueAll(klog.FromContext(ctx))
	// Turns at 0, 25, 50 and 75 s.
	start := clk.Now()
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 1}, {24 * time.Second, 1}, {25 * time.Second, 2}, {74 * time.Second, 3}, {75 * time.Second, 4}} {
		clk.SetTime(start.Add(tc.at))
		deadline := time.Now().Add(5 * time.Second)
		for c.queue.Len() < tc.want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := c.queue.Len(); got != tc.want {
			t.Fatalf("%v into the sweep: %d nodes queued, want %d", tc.at, got, tc.want)
		}
	}
}
