package nodeipam

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller"
	kcmtestutil "github.com/kcm-dev/kcm/internal/testutil"
)

type testController struct {
	*Controller
	client   *fake.Clientset
	indexer  cache.Indexer
	recorder *record.FakeRecorder
	ctx      context.Context
}

// newTestController returns a controller over cluster with the Nodes in
// its cache and in the fake client, their CIDRs taken over as in Run.
func newTestController(t *testing.T, cluster string, nodes ...*v1.Node) *testController {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	objs := make([]runtime.Object, len(nodes))
	for i, n := range nodes {
		objs[i] = n
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	parsed, errs := ParseConfig(cfg(cluster, ""))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c, err := newController(ctx, "node-ipam-controller", client, factory.Core().V1().Nodes(), parsed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	indexer := factory.Core().V1().Nodes().Informer().GetIndexer()
	for _, n := range nodes {
		if err := indexer.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(10)
	c.recorder = rec
	c.occupyExisting(ctx)
	return &testController{Controller: c, client: client, indexer: indexer, recorder: rec, ctx: ctx}
}

// patches returns the bodies of the Node patches sent.
func (tc *testController) patches() []string {
	var out []string
	for _, a := range tc.client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "nodes" {
			out = append(out, p.GetName()+" "+string(p.GetPatch()))
		}
	}
	return out
}

func (tc *testController) sync(t *testing.T, name string) error {
	t.Helper()
	return tc.syncNode(tc.ctx, name)
}

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

func TestSyncAllocatesWithOnePatch(t *testing.T) {
	tc := newTestController(t, "10.244.0.0/16", node("held", "10.244.0.0/24"), node("new"))
	if err := tc.sync(t, "new"); err != nil {
		t.Fatal(err)
	}
	want := []string{`new {"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"]}}`}
	if got := tc.patches(); !slices.Equal(got, want) {
		t.Errorf("patches %v, want %v", got, want)
	}
	// The cache has not caught up: no second patch.
	if err := tc.sync(t, "new"); err != nil {
		t.Fatal(err)
	}
	// Nodes that hold their CIDRs need no write.
	if err := tc.sync(t, "held"); err != nil {
		t.Fatal(err)
	}
	if got := tc.patches(); len(got) != 1 {
		t.Errorf("patches %v, want one", got)
	}
}

func TestSyncDualStack(t *testing.T) {
	tc := newTestController(t, "10.244.0.0/16,fd00:10:244::/56", node("n"))
	if err := tc.sync(t, "n"); err != nil {
		t.Fatal(err)
	}
	want := []string{`n {"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24","fd00:10:244::/64"]}}`}
	if got := tc.patches(); !slices.Equal(got, want) {
		t.Errorf("patches %v, want %v", got, want)
	}
}

func TestSyncExhaustionRecordsEventAndWaits(t *testing.T) {
	tc := newTestController(t, "10.0.0.0/24", node("a", "10.0.0.0/24"), node("b"))
	err := tc.sync(t, "b")
	if !controller.IsPermanent(err) || !errors.Is(err, ErrNoCIDRsRemaining) {
		t.Fatalf("err = %v, want a permanent ErrNoCIDRsRemaining", err)
	}
	want := []string{"Normal CIDRNotAvailable Node b status is now: CIDRNotAvailable"}
	if got := tc.events(); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	// Node a goes away: its block is released and b is queued again.
	if err := tc.indexer.Delete(node("a")); err != nil {
		t.Fatal(err)
	}
	if err := tc.sync(t, "a"); err != nil {
		t.Fatal(err)
	}
	if tc.queue.Len() != 1 {
		t.Fatalf("queue holds %d keys, want b", tc.queue.Len())
	}
	if key, _ := tc.queue.Get(); key != "b" {
		t.Fatalf("queued %q, want b", key)
	}
	if err := tc.sync(t, "b"); err != nil {
		t.Fatal(err)
	}
	want = []string{`b {"spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"]}}`}
	if got := tc.patches(); !slices.Equal(got, want) {
		t.Errorf("patches %v, want %v", got, want)
	}
}

func TestSyncPatchFailureKeepsTheCIDRsForTheNode(t *testing.T) {
	tc := newTestController(t, "10.0.0.0/16", node("n"))
	tc.client.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	for i := range cidrUpdateRetries {
		if err := tc.sync(t, "n"); err == nil {
			t.Fatal("want an error to retry")
		}
		tc.queue.AddRateLimited("n") // what the worker does
		if got := tc.events(); (i == cidrUpdateRetries-1) != (len(got) == 1) {
			t.Errorf("attempt %d: events %v", i+1, got)
		}
	}
	got := tc.patches()
	for _, p := range got {
		if !strings.Contains(p, `"podCIDR":"10.0.0.0/24"`) {
			t.Errorf("retry patched other CIDRs: %s", p)
		}
	}
	if len(got) != cidrUpdateRetries {
		t.Errorf("%d patches, want %d", len(got), cidrUpdateRetries)
	}
}

func TestSyncNodeRecreatedUnderTheSameName(t *testing.T) {
	tc := newTestController(t, "10.0.0.0/23", node("n", "10.0.0.0/24"))
	fresh := node("n")
	fresh.UID = types.UID("n-2")
	if err := tc.indexer.Update(fresh); err != nil {
		t.Fatal(err)
	}
	if err := tc.sync(t, "n"); err != nil {
		t.Fatal(err)
	}
	// The old Node's block was released and is free again (occupying does
	// not move upstream's next candidate, so it is the first one found).
	want := []string{`n {"spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"]}}`}
	if got := tc.patches(); !slices.Equal(got, want) {
		t.Errorf("patches %v, want %v", got, want)
	}
	if n := tc.alloc.sets[0].InUse(); n != 1 {
		t.Errorf("%d blocks in use, want 1", n)
	}
}

func TestSyncNodeBeingDeletedGetsNothing(t *testing.T) {
	n := node("n")
	now := metav1.Now()
	n.DeletionTimestamp = &now
	tc := newTestController(t, "10.0.0.0/16", n)
	if err := tc.sync(t, "n"); err != nil {
		t.Fatal(err)
	}
	if got := tc.patches(); len(got) != 0 {
		t.Errorf("patches %v", got)
	}
}

func TestSyncBadPodCIDRIsPermanent(t *testing.T) {
	tc := newTestController(t, "10.0.0.0/16", node("n", "192.168.0.0/24"))
	if err := tc.sync(t, "n"); !controller.IsPermanent(err) {
		t.Errorf("err = %v, want permanent", err)
	}
}

func TestUpdatesThatNeedNoWorkAreNotQueued(t *testing.T) {
	tc := newTestController(t, "10.0.0.0/16")
	held := node("n", "10.0.0.0/24")
	tc.nodeUpdated(held, held.DeepCopy())
	if tc.queue.Len() != 0 {
		t.Errorf("heartbeat of a Node with CIDRs was queued")
	}
	tc.nodeUpdated(node("n"), node("n"))
	tc.nodeUpdated(node("m"), node("m", "10.0.1.0/24"))
	if tc.queue.Len() != 2 {
		t.Errorf("queue holds %d keys, want 2", tc.queue.Len())
	}
}

// TestSyncBeforeTheCacheCatchesUpReleasesNothing: a Node synced again before
// the informer shows the CIDRs just patched keeps its block; nothing is
// allocated a second time, so nothing is released (upstream allocates a
// second block there and releases it, which counts a release on an idle
// cluster; the parity allowlist's cidrReleaseRace). A deleted Node's block
// is released and counted, as upstream's.
func TestSyncBeforeTheCacheCatchesUpReleasesNothing(t *testing.T) {
	const cluster = "10.55.0.0/16" // a label of this test's own
	tc := newTestController(t, cluster, node("n"))
	allocs := cidrSetAllocations.WithLabelValues(cluster)
	releases := cidrSetReleases.WithLabelValues(cluster)
	for range 3 {
		if err := tc.sync(t, "n"); err != nil {
			t.Fatal(err)
		}
	}
	if got := kcmtestutil.CounterValue(t, allocs); got != 1 {
		t.Errorf("%v allocations, want 1", got)
	}
	if got := kcmtestutil.CounterValue(t, releases); got != 0 {
		t.Errorf("%v releases before the Node is deleted, want 0", got)
	}
	if err := tc.indexer.Delete(node("n")); err != nil {
		t.Fatal(err)
	}
	if err := tc.sync(t, "n"); err != nil {
		t.Fatal(err)
	}
	if got := kcmtestutil.CounterValue(t, releases); got != 1 {
		t.Errorf("%v releases after the Node is deleted, want 1", got)
	}
}
