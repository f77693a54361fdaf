package tainteviction

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const time1h = time.Hour

const (
	testNS   = "ns"
	testPod  = "p"
	testNode = "n1"
	podKey   = testNS + "/" + testPod
)

// testController is a controller whose caches the test fills directly.
type testController struct {
	*Controller
	ctx      context.Context
	clock    *testingclock.FakeClock
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newTestController(t *testing.T) *testController {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(t0)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "taint-eviction-controller", client, clk, false,
		factory.Core().V1().Pods(), factory.Core().V1().Nodes())
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(100)
	c.recorder = rec
	t.Cleanup(func() {
		c.nodeQueue.ShutDown()
		c.podQueue.ShutDown()
		c.evictions.queue.ShutDown()
	})
	return &testController{Controller: c, ctx: ctx, clock: clk, client: client, factory: factory, recorder: rec}
}

func (tc *testController) addNode(t *testing.T, node *v1.Node) {
	t.Helper()
	if err := tc.factory.Core().V1().Nodes().Informer().GetIndexer().Add(node); err != nil {
		t.Fatal(err)
	}
}

func (tc *testController) addPod(t *testing.T, pod *v1.Pod) {
	t.Helper()
	if err := tc.factory.Core().V1().Pods().Informer().GetIndexer().Add(pod); err != nil {
		t.Fatal(err)
	}
}

// events drains the recorded events.
func (tc *testController) events() []string {
	var out []string
	for {
		select {
		case e := <-tc.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func node(name string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
}

func pod(nodeName string, tolerations ...v1.Toleration) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: testPod, UID: "uid-1"},
		Spec:       v1.PodSpec{NodeName: nodeName, Tolerations: tolerations},
	}
}

func after(d time.Duration) *time.Duration { return &d }

func tolerateFor(key string, seconds *int64) v1.Toleration {
	return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func cancelEvent() string { return "Normal TaintManagerEviction Cancelling deletion of Pod " + podKey }

func TestSyncPod(t *testing.T) {
	noExec := taint("evict", "", v1.TaintEffectNoExecute)
	other := taint("other", "", v1.TaintEffectNoExecute)
	tests := []struct {
		name    string
		node    *v1.Node // nil: the node does not exist
		pod     *v1.Pod  // nil: the pod does not exist
		pending *time.Duration
		want    *time.Duration // nil: no eviction pending
		events  []string
	}{
		{name: "untolerated taint evicts now",
			node: node(testNode, noExec), pod: pod(testNode), want: after(0)},
		{name: "tolerated for a while",
			node: node(testNode, noExec), pod: pod(testNode, tolerateFor("evict", ptr.To[int64](10))), want: after(10 * time.Second)},
		{name: "tolerated forever",
			node: node(testNode, noExec), pod: pod(testNode, tolerateFor("evict", nil))},
		{name: "NoSchedule taints do not count",
			node: node(testNode, taint("evict", "", v1.TaintEffectNoSchedule)), pod: pod(testNode)},
		{name: "unbound pod",
			node: node(testNode, noExec), pod: pod("")},
		{name: "taint removed cancels",
			node: node(testNode), pod: pod(testNode, tolerateFor("evict", ptr.To[int64](10))),
			pending: after(10 * time.Second), events: []string{cancelEvent()}},
		{name: "tolerated forever now cancels",
			node: node(testNode, noExec), pod: pod(testNode, tolerateFor("evict", nil)),
			pending: after(10 * time.Second), events: []string{cancelEvent()}},
		{name: "pod deleted cancels",
			node: node(testNode, noExec), pending: after(10 * time.Second), events: []string{cancelEvent()}},
		{name: "pod bound elsewhere cancels",
			node: node("n2"), pod: pod("n2"), pending: after(10 * time.Second), events: []string{cancelEvent()}},
		{name: "node deleted keeps the pending eviction",
			pod: pod(testNode), pending: after(10 * time.Second), want: after(10 * time.Second)},
		{name: "pending eviction keeps its deadline",
			node:    node(testNode, noExec, other),
			pod:     pod(testNode, tolerateFor("evict", ptr.To[int64](300)), tolerateFor("other", ptr.To[int64](5))),
			pending: after(300 * time.Second), want: after(300 * time.Second)},
		{name: "new untolerated taint replaces a delayed eviction",
			node: node(testNode, noExec, other), pod: pod(testNode, tolerateFor("evict", ptr.To[int64](300))),
			pending: after(300 * time.Second), want: after(0), events: []string{cancelEvent()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestController(t)
			if tc.node != nil {
				c.addNode(t, tc.node)
			}
			if tc.pod != nil {
				c.addPod(t, tc.pod)
			}
			if tc.pending != nil {
				c.evictions.schedule(podKey, t0.Add(*tc.pending))
			}
			if err := c.syncPod(c.ctx, podKey); err != nil {
				t.Fatalf("syncPod: %v", err)
			}
			at, pending := c.evictions.pending(podKey)
			switch {
			case tc.want == nil && pending:
				t.Errorf("eviction pending at %v, want none", at.Sub(t0))
			case tc.want != nil && !pending:
				t.Errorf("no eviction pending, want one after %v", *tc.want)
			case tc.want != nil && !at.Equal(t0.Add(*tc.want)):
				t.Errorf("eviction pending after %v, want after %v", at.Sub(t0), *tc.want)
			}
			if got := c.events(); fmt.Sprint(got) != fmt.Sprint(tc.events) {
				t.Errorf("events = %q, want %q", got, tc.events)
			}
		})
	}
}

func TestSyncNodeQueuesItsPods(t *testing.T) {
	c := newTestController(t)
	c.addNode(t, node(testNode))
	for i, n := range []string{testNode, testNode, "n2", ""} {
		p := pod(n)
		p.Name = fmt.Sprintf("p%d", i)
		c.addPod(t, p)
	}
	if err := c.syncNode(c.ctx, testNode); err != nil {
		t.Fatal(err)
	}
	if got := c.podQueue.Len(); got != 2 {
		t.Errorf("queued %d pods, want the 2 on %s", got, testNode)
	}
	if err := c.syncNode(c.ctx, "gone"); err != nil {
		t.Errorf("syncNode of a deleted node: %v", err)
	}
}

func TestHandlersFilterUpdates(t *testing.T) {
	c := newTestController(t)
	tainted := node(testNode, taint("evict", "", v1.TaintEffectNoExecute))
	c.updateNode(node(testNode), node(testNode, taint("x", "", v1.TaintEffectNoSchedule)))
	if c.nodeQueue.Len() != 0 {
		t.Error("a NoSchedule taint change queued the node")
	}
	c.updateNode(node(testNode), tainted)
	if c.nodeQueue.Len() != 1 {
		t.Error("a NoExecute taint change did not queue the node")
	}

	relabelled := pod(testNode)
	relabelled.Labels = map[string]string{"a": "b"}
	c.updatePod(pod(testNode), relabelled)
	if c.podQueue.Len() != 0 {
		t.Error("a label change queued the pod")
	}
	c.updatePod(pod(testNode), pod(testNode, tolerateFor("evict", nil)))
	if c.podQueue.Len() != 1 {
		t.Error("a toleration change did not queue the pod")
	}
}
