package nodelifecycle

import (
	"context"
	"net/http"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var testOptions = Options{
	MonitorPeriod:          5 * time.Second,
	StartupGracePeriod:     time.Minute,
	MonitorGracePeriod:     50 * time.Second,
	EvictionQPS:            0.1,
	SecondaryEvictionQPS:   0.01,
	LargeClusterThreshold:  50,
	UnhealthyZoneThreshold: 0.55,
}

// fixture is a controller on a fake clientset whose informer caches are
// filled by hand (the informers never run).
type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	clock    *clocktesting.FakeClock
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := apiServerLikeClient(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	c, err := newController(ctx, "node-lifecycle-controller", client, clk, testOptions,
		factory.Coordination().V1().Leases(), factory.Core().V1().Pods(), factory.Core().V1().Nodes())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, c: c, client: client, clock: clk, factory: factory, recorder: record.NewFakeRecorder(100)}
	c.recorder = f.recorder
	for _, obj := range objs {
		f.cache(obj)
	}
	return f
}

// cache puts obj into the informer cache of its kind.
func (f *fixture) cache(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Node:
		err = f.factory.Core().V1().Nodes().Informer().GetIndexer().Update(o)
	case *v1.Pod:
		err = f.factory.Core().V1().Pods().Informer().GetIndexer().Update(o)
	case *coordv1.Lease:
		err = f.factory.Coordination().V1().Leases().Informer().GetIndexer().Update(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// storedNode returns the node as the fake API server has it, and puts that
// into the cache, as the informer would.
func (f *fixture) storedNode(name string) *v1.Node {
	f.t.Helper()
	n, err := f.client.CoreV1().Nodes().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cache(n)
	return n
}

func (f *fixture) storedPod(ns, name string) *v1.Pod {
	f.t.Helper()
	p, err := f.client.CoreV1().Pods(ns).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (f *fixture) countActions(verb, resource string) int {
	n := 0
	for _, a := range f.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// apiServerLikeClient returns a fake clientset that, like the API server,
// rejects a JSON patch whose test fails as Invalid (422).
func apiServerLikeClient(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	react := k8stesting.ObjectReaction(client.Tracker())
	client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		_, obj, err := react(a)
		if err != nil && apierrors.ReasonForError(err) == metav1.StatusReasonUnknown {
			err = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return true, obj, err
	})
	return client
}

type nodeOpt func(*v1.Node)

func newNode(name string, opts ...nodeOpt) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func withCondition(t v1.NodeConditionType, s v1.ConditionStatus, heartbeat time.Time) nodeOpt {
	return func(n *v1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{
			Type: t, Status: s, Reason: "KubeletSays", Message: "kubelet says so",
			LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour)),
		})
	}
}

// kubeletConds is a healthy kubelet's conditions, posted at heartbeat.
func kubeletConds(ready v1.ConditionStatus, heartbeat time.Time) nodeOpt {
	return func(n *v1.Node) {
		withCondition(v1.NodeMemoryPressure, v1.ConditionFalse, heartbeat)(n)
		withCondition(v1.NodeDiskPressure, v1.ConditionFalse, heartbeat)(n)
		withCondition(v1.NodePIDPressure, v1.ConditionFalse, heartbeat)(n)
		withCondition(v1.NodeReady, ready, heartbeat)(n)
	}
}

func withTaints(taints ...v1.Taint) nodeOpt {
	return func(n *v1.Node) { n.Spec.Taints = append(n.Spec.Taints, taints...) }
}

func withLabels(kv ...string) nodeOpt {
	return func(n *v1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func newLease(node string, renew time.Time, rv string) *coordv1.Lease {
	t := metav1.NewMicroTime(renew)
	return &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: v1.NamespaceNodeLease, Name: node, ResourceVersion: rv},
		Spec:       coordv1.LeaseSpec{RenewTime: &t},
	}
}

func readyPod(ns, name, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.PodSpec{NodeName: node},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionTrue, Reason: "r", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))},
		}},
	}
}

func condition(n *v1.Node, t v1.NodeConditionType) *v1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func taintKeys(taints []v1.Taint) []string {
	var out []string
	for _, t := range taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}
