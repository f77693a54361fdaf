package nodelifecycle

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

func (f *fixture) monitor() {
	f.t.Helper()
	if err := f.c.monitorNodeHealth(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// keepHealthy posts a fresh heartbeat for the named node (in the cache), so
// that its zone is not fully disrupted.
func (f *fixture) keepHealthy(name string) {
	n := newNode(name, kubeletConds(v1.ConditionTrue, f.clock.Now()))
	f.cache(n)
}

// TestNodeStopsReporting follows a node whose kubelet dies and comes back.
func TestNodeStopsReporting(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionTrue, t0.Add(-10*time.Minute)))
	lease := newLease("n1", t0.Add(-time.Second), "7")
	f := newFixture(t, node, lease, readyPod("ns", "p1", "n1"), readyPod("ns", "other", "n2"), newNode("n2", kubeletConds(v1.ConditionTrue, t0)))

	f.monitor()
	// Nodes come from the lister in no particular order.
	ev := f.events()
	sort.Strings(ev)
	if !reflect.DeepEqual(ev, []string{
		"Normal RegisteredNode Node n1 event: Registered Node n1 in Controller",
		"Normal RegisteredNode Node n2 event: Registered Node n2 in Controller",
	}) {
		t.Errorf("events = %v", ev)
	}
	if len(f.client.Actions()) != 0 {
		t.Fatalf("healthy node: requests %v", f.client.Actions())
	}

	// Within the grace period nothing happens.
	f.clock.Step(50 * time.Second)
	f.monitor()
	if len(f.client.Actions()) != 0 {
		t.Fatalf("within grace: requests %v", f.client.Actions())
	}

	f.clock.Step(time.Second)
	f.keepHealthy("n2")
	cached, err := f.c.nodeLister.Get("n1")
	if err != nil {
		t.Fatal(err)
	}
	want := cached.DeepCopy()
	f.monitor()
	// The pass marks a copy: the informer's object is shared.
	if !reflect.DeepEqual(cached, want) {
		t.Error("the pass changed the informer's node")
	}
	stored := f.storedNode("n1")
	for _, ct := range kubeletConditions {
		c := condition(stored, ct)
		if c == nil || c.Status != v1.ConditionUnknown || c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status." {
			t.Errorf("%s = %+v", ct, c)
		}
	}
	pod := f.storedPod("ns", "p1")
	if pod.Status.Conditions[1].Status != v1.ConditionFalse || pod.Status.Conditions[1].Reason != "r" {
		t.Errorf("pod Ready = %+v", pod.Status.Conditions[1])
	}
	if other := f.storedPod("ns", "other"); other.Status.Conditions[1].Status != v1.ConditionTrue {
		t.Error("pod on another node marked not ready")
	}
	ev = f.events()
	if !hasEvent(ev, "Normal NodeNotReady Node n1 status is now: NodeNotReady") || !hasEvent(ev, "Warning NodeNotReady Node is not ready") {
		t.Errorf("events = %v", ev)
	}
	if got := f.countActions("update", "nodes"); got != 1 {
		t.Errorf("%d node status updates, want 1", got)
	}

	// The NoExecute taint comes from the zone's queue, the NoSchedule one
	// from the node sync; one request each.
	f.client.ClearActions()
	f.c.noExecuteTaintingPass(f.ctx)
	f.storedNode("n1")
	if err := f.c.syncNode(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	stored = f.storedNode("n1")
	if got, want := taintKeys(stored.Spec.Taints), []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}; !reflect.DeepEqual(got, want) {
		t.Errorf("taints = %v, want %v", got, want)
	}
	for _, taint := range stored.Spec.Taints {
		if taint.TimeAdded == nil || !taint.TimeAdded.Time.Equal(f.clock.Now().Truncate(time.Second)) {
			t.Errorf("taint %s added at %v", taint.Key, taint.TimeAdded)
		}
	}
	if n := f.countActions("patch", "nodes"); n != 2 {
		t.Errorf("%d patches, want 2", n)
	}

	// Passes while the node stays down change nothing.
	f.client.ClearActions()
	f.clock.Step(5 * time.Second)
	f.keepHealthy("n2")
	f.monitor()
	f.c.noExecuteTaintingPass(f.ctx)
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("steady state: requests %v", f.client.Actions())
	}

	// The kubelet is back.
	back := stored.DeepCopy()
	back.Status.Conditions = nil
	kubeletConds(v1.ConditionTrue, f.clock.Now())(back)
	if _, err := f.client.CoreV1().Nodes().UpdateStatus(f.ctx, back, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.storedNode("n1")
	f.clock.Step(5 * time.Second)
	f.keepHealthy("n2")
	f.monitor()
	f.storedNode("n1")
	if err := f.c.syncNode(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if taints := f.storedNode("n1").Spec.Taints; len(taints) != 0 {
		t.Errorf("taints after recovery: %v", taintKeys(taints))
	}
}

// TestNodeNeverReported: a node that never posted a status is given the
// startup grace period, then gets every kubelet condition as never updated.
func TestNodeNeverReported(t *testing.T) {
	node := newNode("n1")
	node.CreationTimestamp = metav1.NewTime(t0)
	f := newFixture(t, node)
	f.monitor()
	f.clock.Step(time.Minute)
	f.monitor()
	if got := f.countActions("update", "nodes"); got != 0 {
		t.Fatalf("within startup grace: %d updates", got)
	}
	f.clock.Step(time.Second)
	f.keepHealthy("n2")
	f.monitor()
	stored := f.storedNode("n1")
	for _, ct := range kubeletConditions {
		c := condition(stored, ct)
		if c == nil || c.Status != v1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" || c.Message != "Kubelet never posted node status." {
			t.Errorf("%s = %+v", ct, c)
		}
	}
	if ev := f.events(); hasEvent(ev, "Normal NodeNotReady") {
		t.Errorf("a node that never was Ready got %v", ev)
	}
}

// TestNodeNotReadyByKubelet: a kubelet reporting Ready=False is tainted
// not-ready, and a wrong unreachable taint is swapped at once.
func TestNodeNotReadyByKubelet(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionFalse, t0), withTaints(unreachableTaint))
	f := newFixture(t, node, newNode("n2", kubeletConds(v1.ConditionTrue, t0)))
	// Known already, so that the first pass does not lift its taints as it
	// does for a node it has not seen (upstream does so at start-up).
	f.c.knownNodes["n1"] = node
	f.monitor()
	stored := f.storedNode("n1")
	if got, want := taintKeys(stored.Spec.Taints), []string{"node.kubernetes.io/not-ready:NoExecute"}; !reflect.DeepEqual(got, want) {
		t.Errorf("taints = %v, want %v", got, want)
	}
	if got := f.countActions("patch", "nodes"); got != 1 {
		t.Errorf("%d patches, want 1", got)
	}
	if got := f.countActions("update", "pods"); got != 0 {
		t.Errorf("kubelet-reported NotReady: %d pod updates, want none (the kubelet does that)", got)
	}
}

func TestSyncNodeOnePatch(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionTrue, t0),
		withLabels(v1.LabelOSStable, "linux", v1.LabelArchStable, "arm64", "beta.kubernetes.io/arch", "amd64"),
		withTaints(v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}),
		func(n *v1.Node) { n.Spec.Unschedulable = true })
	f := newFixture(t, node)
	if err := f.c.syncNode(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	stored := f.storedNode("n1")
	if got, want := taintKeys(stored.Spec.Taints), []string{"node.kubernetes.io/unschedulable:NoSchedule"}; !reflect.DeepEqual(got, want) {
		t.Errorf("taints = %v, want %v", got, want)
	}
	if stored.Labels["beta.kubernetes.io/os"] != "linux" || stored.Labels["beta.kubernetes.io/arch"] != "arm64" {
		t.Errorf("labels = %v", stored.Labels)
	}
	if n := f.countActions("patch", "nodes"); n != 1 {
		t.Errorf("%d patches, want 1", n)
	}
	f.client.ClearActions()
	if err := f.c.syncNode(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.syncNode(f.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("no-op sync made requests: %v", f.client.Actions())
	}
}

// TestFullDisruption: when every node of every zone is down, NoExecute
// taints are lifted and tainting stops; when one comes back, the zones
// resume.
func TestFullDisruption(t *testing.T) {
	old := t0.Add(-10 * time.Minute)
	var objs []runtime.Object
	for _, n := range []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}} {
		objs = append(objs, newNode(n.name, kubeletConds(v1.ConditionUnknown, old),
			withLabels(v1.LabelTopologyZone, n.zone), withTaints(unreachableTaint)))
	}
	f := newFixture(t, objs...)
	f.monitor()
	for _, name := range []string{"a1", "a2", "b1"} {
		if taints := f.storedNode(name).Spec.Taints; len(taints) != 0 {
			t.Errorf("%s: taints %v", name, taintKeys(taints))
		}
	}
	for key, state := range f.c.zoneStates {
		if state != stateFullDisruption || f.c.zones.queue(key).QPS() != 0 {
			t.Errorf("zone %q: %s at %v qps", key, state, f.c.zones.queue(key).QPS())
		}
	}

	// b1 recovers: zone b is Normal, zone a fully disrupted at the normal rate.
	b1 := f.storedNode("b1")
	b1.Status.Conditions = nil
	kubeletConds(v1.ConditionTrue, t0)(b1)
	f.cache(b1)
	f.clock.Step(5 * time.Second)
	f.monitor()
	want := map[string]zoneState{":\x00:a": stateFullDisruption, ":\x00:b": stateNormal}
	if !reflect.DeepEqual(f.c.zoneStates, want) {
		t.Errorf("zone states = %v, want %v", f.c.zoneStates, want)
	}
	if q := f.c.zones.queue(":\x00:a").QPS(); q != testOptions.EvictionQPS {
		t.Errorf("zone a qps = %v", q)
	}
}

func TestNodeRemoved(t *testing.T) {
	f := newFixture(t, newNode("n1", kubeletConds(v1.ConditionTrue, t0)))
	f.monitor()
	f.events()
	if err := f.factory.Core().V1().Nodes().Informer().GetIndexer().Delete(newNode("n1")); err != nil {
		t.Fatal(err)
	}
	f.monitor()
	if ev := f.events(); !reflect.DeepEqual(ev, []string{"Normal RemovingNode Node n1 event: Removing Node n1 from Controller"}) {
		t.Errorf("events = %v", ev)
	}
	if f.c.health.get("n1") != nil {
		t.Error("health of a removed node kept")
	}
}

func TestSyncPod(t *testing.T) {
	down := newNode("down", kubeletConds(v1.ConditionUnknown, t0))
	up := newNode("up", kubeletConds(v1.ConditionTrue, t0))
	f := newFixture(t, down, up, readyPod("ns", "on-down", "down"), readyPod("ns", "on-up", "up"), readyPod("ns", "unseen", "new"))
	f.monitor()
	f.client.ClearActions()
	for _, key := range []string{"ns/on-down", "ns/on-up", "ns/unseen", "ns/missing"} {
		if err := f.c.syncPod(f.ctx, key); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	if got := f.countActions("update", "pods"); got != 1 {
		t.Errorf("%d pod updates, want 1", got)
	}
	if p := f.storedPod("ns", "on-down"); p.Status.Conditions[1].Status != v1.ConditionFalse {
		t.Error("pod on a down node still ready")
	}
}

func TestPodBoundEnqueues(t *testing.T) {
	f := newFixture(t)
	unbound := readyPod("ns", "p", "")
	bound := readyPod("ns", "p", "n1")
	f.c.podBound(nil, unbound)
	f.c.podBound(unbound, unbound)
	f.c.podBound(bound, bound)
	if f.c.podQueue.Len() != 0 {
		t.Fatalf("queued %d", f.c.podQueue.Len())
	}
	f.c.podBound(unbound, bound)
	f.c.podBound(nil, bound)
	if f.c.podQueue.Len() != 1 {
		t.Fatalf("queued %d, want 1", f.c.podQueue.Len())
	}
}

type fakeRV string

func (r fakeRV) LastStoreSyncResourceVersion() string { return string(r) }

// TestLeaseCircuitBreaker: an expired-looking cached Lease that is stale
// compared with the live one stops the pass until the cache catches up.
func TestLeaseCircuitBreaker(t *testing.T) {
	node := newNode("n1", kubeletConds(v1.ConditionTrue, t0.Add(-time.Hour)))
	cached := newLease("n1", t0.Add(-time.Hour), "5")
	live := newLease("n1", t0, "9")
	f := newFixture(t, node, live)
	f.cache(cached)
	rv := fakeRV("5")
	f.c.leaseGuard = &leaseGuard{client: f.client, store: &rv}

	f.monitor()
	f.clock.Step(time.Minute)
	f.monitor()
	if got := f.countActions("update", "nodes"); got != 0 {
		t.Fatalf("node declared Unknown on a stale Lease cache")
	}
	if got := f.countActions("get", "leases"); got != 1 {
		t.Errorf("%d live Lease reads, want 1", got)
	}
	if err := f.c.leaseGuard.ready(); err == nil {
		t.Error("guard ready while the cache is behind")
	}
	f.clock.Step(5 * time.Second)
	f.monitor()
	if got := f.countActions("get", "leases"); got != 1 {
		t.Errorf("pass not skipped while the cache is behind")
	}
	// The cache catches up with the renewed Lease: healthy.
	rv = "9"
	f.cache(live)
	f.monitor()
	if err := f.c.leaseGuard.ready(); err != nil {
		t.Errorf("guard: %v", err)
	}
	if got := f.countActions("update", "nodes"); got != 0 {
		t.Errorf("node declared Unknown after all")
	}
}

func TestRunStops(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(newNode("n1", kubeletConds(v1.ConditionTrue, time.Now())))
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "node-lifecycle-controller", client, clocktesting.NewFakeClock(time.Now()), testOptions,
		factory.Coordination().V1().Leases(), factory.Core().V1().Pods(), factory.Core().V1().Nodes())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "node-lifecycle-controller" {
		t.Errorf("Name() = %q", c.Name())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{}); err == nil && len(evs.Items) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no RegisteredNode event")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestNewRejectsBadPeriod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	opts := testOptions
	opts.MonitorPeriod = 0
	if _, err := newController(ctx, "x", client, clocktesting.NewFakeClock(t0), opts,
		factory.Coordination().V1().Leases(), factory.Core().V1().Pods(), factory.Core().V1().Nodes()); err == nil {
		t.Error("no error for a zero monitor period")
	}
}
