package podgc

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + k8stypes.UID(name), CreationTimestamp: metav1.NewTime(t0)}}
	p.Status.Phase = v1.PodRunning
	for _, o := range opts {
		o(p)
	}
	return p
}

func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func onNode(n string) podOpt      { return func(p *v1.Pod) { p.Spec.NodeName = n } }
func evicted() podOpt {
	return func(p *v1.Pod) { p.Status.Phase, p.Status.Reason = v1.PodFailed, "Evicted" }
}
func created(d time.Duration) podOpt {
	return func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(t0.Add(d)) }
}
func terminating() podOpt {
	return func(p *v1.Pod) { ts := metav1.NewTime(t0); p.DeletionTimestamp = &ts }
}

func node(name string, ready v1.ConditionStatus, taints ...v1.Taint) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.NodeSpec{Taints: taints},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}},
	}
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestTerminatedOverThreshold(t *testing.T) {
	pods := []*v1.Pod{
		pod("running", phase(v1.PodRunning), created(-10*time.Hour)),
		pod("pending", phase(v1.PodPending), created(-10*time.Hour)),
		pod("unknown", phase(v1.PodUnknown), created(-10*time.Hour)),
		pod("new-succeeded", phase(v1.PodSucceeded), created(-1*time.Minute)),
		pod("old-failed", phase(v1.PodFailed), created(-2*time.Hour)),
		pod("b-same-age", phase(v1.PodSucceeded), created(-time.Hour)),
		pod("a-same-age", phase(v1.PodSucceeded), created(-time.Hour)),
		pod("new-evicted", evicted(), created(0)),
	}
	tests := []struct {
		threshold int
		want      []string
	}{
		{threshold: 5, want: nil},
		{threshold: 4, want: []string{"new-evicted"}},
		{threshold: 1, want: []string{"new-evicted", "old-failed", "a-same-age", "b-same-age"}},
		{threshold: 0, want: []string{"new-evicted", "old-failed", "a-same-age", "b-same-age", "new-succeeded"}},
	}
	for _, tc := range tests {
		if got := names(terminatedOverThreshold(pods, tc.threshold)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("threshold %d: got %v, want %v", tc.threshold, got, tc.want)
		}
	}
	if pods[0].Name != "running" || pods[7].Name != "new-evicted" {
		t.Error("input reordered")
	}
}

// newTestController returns a controller whose caches and fake client hold
// objs, on a fake clock at t0.
func newTestController(t *testing.T, opts Options, objs ...runtime.Object) (*Controller, *fake.Clientset, *testclock.FakeClock) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testclock.NewFakeClock(t0)
	c, err := newController(ctx, "pod-garbage-collector-controller", client, clk,
		factory.Core().V1().Pods(), factory.Core().V1().Nodes(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.Node:
			err = factory.Core().V1().Nodes().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, client, clk
}

// deleted returns the names of the pods deleted, sorted.
func deleted(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok && a.GetResource().Resource == "pods" {
			out = append(out, d.GetName())
		}
	}
	sort.Strings(out)
	return out
}

func statusPatches(client *fake.Clientset) map[string]v1.Pod {
	out := map[string]v1.Pod{}
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetSubresource() == "status" {
			var body v1.Pod
			if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
				panic(err)
			}
			out[p.GetName()] = body
		}
	}
	return out
}

func TestOrphanedPodsCollectedAfterQuarantine(t *testing.T) {
	c, client, clk := newTestController(t, Options{},
		node("alive", v1.ConditionTrue),
		pod("orphan", onNode("gone"), func(p *v1.Pod) { p.Generation = 3 }),
		pod("orphan-done", onNode("gone"), phase(v1.PodSucceeded)),
		pod("lagging", onNode("not-in-cache")),
		pod("fine", onNode("alive")),
	)
	// not-in-cache exists in the API server but not (yet) in the informer.
	if _, err := client.CoreV1().Nodes().Create(t.Context(), node("not-in-cache", v1.ConditionTrue), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	ctx := t.Context()

	c.gc(ctx)
	clk.Step(DefaultQuarantine - time.Second)
	c.gc(ctx)
	if got := deleted(client); got != nil {
		t.Fatalf("deleted %v during quarantine", got)
	}
	clk.Step(time.Second)
	c.gc(ctx)
	if got, want := deleted(client), []string{"orphan", "orphan-done"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
	patches := statusPatches(client)
	if _, ok := patches["orphan-done"]; ok {
		t.Error("a Succeeded pod's status was patched")
	}
	p, ok := patches["orphan"]
	if !ok {
		t.Fatal("the running orphan was not marked Failed")
	}
	want := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "DeletionByPodGC",
		Message: "PodGC: node no longer exists", ObservedGeneration: 3}
	var ltt metav1.Time
	if len(p.Status.Conditions) == 1 {
		ltt = p.Status.Conditions[0].LastTransitionTime
		p.Status.Conditions[0].LastTransitionTime = metav1.Time{}
	}
	if !ltt.Time.Equal(clk.Now()) {
		t.Errorf("lastTransitionTime = %v, want %v", ltt, clk.Now())
	}
	if p.Status.Phase != v1.PodFailed || p.Status.ObservedGeneration != 3 || len(p.Status.Conditions) != 1 ||
		!reflect.DeepEqual(p.Status.Conditions[0], want) || p.UID == "" {
		t.Errorf("status patch = %+v", p)
	}
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			if gp := d.GetDeleteOptions().GracePeriodSeconds; gp == nil || *gp != 0 {
				t.Errorf("delete of %s with grace period %v, want 0", d.GetName(), gp)
			}
		}
	}

	// The lagging node was found by the GET and left quarantine; it is
	// quarantined again as long as the informer lacks it.
	client.ClearActions()
	c.gc(ctx)
	if _, ok := c.quarantine["not-in-cache"]; !ok {
		t.Error("a node still missing from the cache was not quarantined again")
	}
}

func TestTerminatedThresholdAndDisabled(t *testing.T) {
	objs := []runtime.Object{
		node("n", v1.ConditionTrue),
		pod("old", onNode("n"), phase(v1.PodSucceeded), created(-time.Hour)),
		pod("new", onNode("n"), phase(v1.PodFailed), created(-time.Minute)),
		pod("running", onNode("n"), created(-2*time.Hour)),
	}
	c, client, _ := newTestController(t, Options{TerminatedPodThreshold: 1}, objs...)
	c.gc(t.Context())
	if got, want := deleted(client), []string{"old"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	if len(statusPatches(client)) != 0 {
		t.Error("terminated pods need no status patch")
	}

	c, client, _ = newTestController(t, Options{TerminatedPodThreshold: 0}, objs...)
	c.gc(t.Context())
	if got := deleted(client); got != nil {
		t.Errorf("threshold 0 deleted %v", got)
	}
}

func TestTerminatingPods(t *testing.T) {
	oos := v1.Taint{Key: v1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: v1.TaintEffectNoExecute}
	c, client, _ := newTestController(t, Options{},
		node("oos-notready", v1.ConditionFalse, oos),
		node("oos-ready", v1.ConditionTrue, oos),
		node("notready", v1.ConditionUnknown),
		pod("on-oos", onNode("oos-notready"), terminating()),
		pod("on-oos-not-terminating", onNode("oos-notready")),
		pod("on-oos-ready", onNode("oos-ready"), terminating()),
		pod("on-notready", onNode("notready"), terminating()),
		pod("unscheduled", terminating(), phase(v1.PodPending)),
		pod("unscheduled-alive", phase(v1.PodPending)),
	)
	c.gc(t.Context())
	if got, want := deleted(client), []string{"on-oos", "unscheduled"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	patches := statusPatches(client)
	if p := patches["unscheduled"]; p.Status.Phase != v1.PodFailed || len(p.Status.Conditions) != 0 {
		t.Errorf("unscheduled pod patch = %+v, want Failed without conditions", p)
	}
}
