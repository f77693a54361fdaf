package daemonset

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

func objs(ds *apps.DaemonSet, rest ...runtime.Object) []runtime.Object {
	return append([]runtime.Object{ds}, rest...)
}

func TestCreatesPodsOnFittingNodes(t *testing.T) {
	ds := newDS(withNodeSelector(map[string]string{"role": "edge"}))
	edge := map[string]string{"role": "edge"}
	f := newFixture(t, objs(ds, newNode("a", nodeLabels(edge)), newNode("b"), newNode("c", nodeLabels(edge)))...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	got := f.createdOn(t)
	slices.Sort(got)
	if !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("created on %v, want a and c", got)
	}
	tmpl := f.pods.Templates[0]
	wantLabels := map[string]string{"app": "web", hashLabel: currentHash(ds), generationLabel: "1"}
	if !reflect.DeepEqual(tmpl.Labels, wantLabels) {
		t.Errorf("pod labels %v, want %v", tmpl.Labels, wantLabels)
	}
	if len(tmpl.Spec.Tolerations) != len(defaultTolerations) || tmpl.Spec.NodeSelector["role"] != "edge" {
		t.Errorf("pod spec %+v", tmpl.Spec)
	}
	if ref := f.pods.ControllerRefs[0]; ref.Kind != "DaemonSet" || ref.UID != ds.UID || !*ref.Controller {
		t.Errorf("controllerRef %+v", ref)
	}
	if want := []string{"create controllerrevisions", "update daemonsets/status"}; !reflect.DeepEqual(f.actions(), want) {
		t.Errorf("actions %v, want %v", f.actions(), want)
	}
	st := f.statusUpdates()[0].Status
	want := apps.DaemonSetStatus{DesiredNumberScheduled: 2, NumberUnavailable: 2, ObservedGeneration: 1}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("status %+v, want %+v", st, want)
	}

	// Until the creations are observed, the next sync creates nothing.
	f.pods.Templates = nil
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f.pods.Templates) != 0 {
		t.Errorf("second sync created %d pods", len(f.pods.Templates))
	}
	logger, _ := ktesting.NewTestContext(t)
	f.c.addPod(logger, daemonPod(ds, "p1", "a"))
	if f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		t.Error("satisfied after one of two creations")
	}
	f.c.addPod(logger, daemonPod(ds, "p2", "c"))
	if !f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		t.Error("not satisfied after both creations")
	}
}

func TestRevisionCreated(t *testing.T) {
	ds := newDS(func(ds *apps.DaemonSet) { ds.Annotations["note"] = "kept" })
	f := newFixture(t, objs(ds, nodes(1)...)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	revs, err := f.client.AppsV1().ControllerRevisions("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 {
		t.Fatalf("revisions %v, %v", revs, err)
	}
	rev := revs.Items[0]
	want := currentRevision(t, ds, 1)
	if rev.Name != want.Name || !reflect.DeepEqual(rev.Labels, want.Labels) || string(rev.Data.Raw) != string(want.Data.Raw) ||
		rev.Revision != 1 || rev.Annotations["note"] != "kept" || !reflect.DeepEqual(rev.OwnerReferences, want.OwnerReferences) {
		t.Errorf("revision %+v, want %+v", rev, want)
	}
}

func TestBurstAndSlowStart(t *testing.T) {
	ds := newDS()
	rev := currentRevision(t, ds, 1)
	f := newFixture(t, objs(ds, append(nodes(300), rev)...)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pods.Templates); n != BurstReplicas {
		t.Errorf("created %d pods, want %d", n, BurstReplicas)
	}

	// A failing batch stops the creations; neither failed nor skipped
	// ones stay expected.
	f = newFixture(t, objs(ds, append(nodes(7), rev)...)...)
	f.pods.CreateLimit = 1
	if err := f.sync(t); err == nil {
		t.Error("no error from failing creations")
	}
	if n := f.pods.CreateCalls(); n != 3 {
		t.Errorf("%d create calls, want 1 + 2", n)
	}
	if add, _, _ := f.c.expectations.GetExpectations("ns/web"); add != 1 {
		t.Errorf("expecting %d creations, want the 1 that succeeded", add)
	}
}

func TestDeletesWhatMustGo(t *testing.T) {
	ds := newDS(withNodeSelector(map[string]string{"role": "edge"}))
	edge := map[string]string{"role": "edge"}
	f := newFixture(t, objs(ds,
		newNode("fits", nodeLabels(edge)), newNode("misfit"), newNode("crowded", nodeLabels(edge)),
		currentRevision(t, ds, 1),
		daemonPod(ds, "ok", "fits"),
		daemonPod(ds, "misfit-pod", "misfit"),
		daemonPod(ds, "oldest", "crowded", createdAt(t0.Add(-3*time.Hour))),
		daemonPod(ds, "younger", "crowded", createdAt(t0.Add(-2*time.Hour))),
		daemonPod(ds, "unbound-older", "crowded", unbound, createdAt(t0.Add(-4*time.Hour))),
		daemonPod(ds, "pinned-to-gone", "gone", unbound),
		daemonPod(ds, "bound-to-gone", "gone"),
	)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(f.pods.Deleted))
	want := []string{"misfit-pod", "pinned-to-gone", "unbound-older", "younger"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	if len(f.pods.Templates) != 0 {
		t.Errorf("created %d pods", len(f.pods.Templates))
	}
	_, del, _ := f.c.expectations.GetExpectations("ns/web")
	if del != 4 || f.c.expectations.GetUIDs("ns/web").Len() != 4 {
		t.Errorf("expecting %d deletions", del)
	}
}

func TestFailedPodBackoff(t *testing.T) {
	ds := newDS()
	f := newFixture(t, objs(ds, newNode("n"), currentRevision(t, ds, 1), daemonPod(ds, "failed", "n", phase(v1.PodFailed)))...)
	logger, _ := ktesting.NewTestContext(t)
	syncFresh := func() {
		t.Helper()
		f.pods.Deleted = nil
		f.c.expectations.DeleteExpectations(logger, "ns/web")
		if err := f.sync(t); err != nil {
			t.Fatal(err)
		}
	}
	key := failedPodsBackoffKey(ds.UID, ds.Status.ObservedGeneration, "n")
	syncFresh()
	if !reflect.DeepEqual(f.pods.Deleted, []string{"failed"}) {
		t.Errorf("deleted %v", f.pods.Deleted)
	}
	if ev := f.events(); len(ev) != 1 || ev[0] != "Warning FailedDaemonPod Found failed daemon pod ns/failed on node n, will try to kill it" {
		t.Errorf("events %q", ev)
	}
	// Still there (the kubelet rejected the replacement too): held back.
	syncFresh()
	if len(f.pods.Deleted) != 0 || len(f.pods.Templates) != 0 {
		t.Errorf("within backoff: deleted %v, created %d", f.pods.Deleted, len(f.pods.Templates))
	}
	if d := f.c.failedPods.Get(key); d != time.Second {
		t.Errorf("backoff %v, want 1s", d)
	}
	f.clock.Step(1500 * time.Millisecond)
	syncFresh()
	if len(f.pods.Deleted) != 1 || f.c.failedPods.Get(key) != 2*time.Second {
		t.Errorf("after backoff: deleted %v, backoff %v", f.pods.Deleted, f.c.failedPods.Get(key))
	}
}

func TestSucceededPodDeleted(t *testing.T) {
	ds := newDS()
	f := newFixture(t, objs(ds, newNode("n"), currentRevision(t, ds, 1), daemonPod(ds, "done", "n", phase(v1.PodSucceeded)))...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.pods.Deleted, []string{"done"}) {
		t.Errorf("deleted %v", f.pods.Deleted)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal SucceededDaemonPod Found succeeded daemon pod ns/done on node n") {
		t.Errorf("events %q", ev)
	}
}

func TestStatus(t *testing.T) {
	ds := newDS(withGeneration(2), withMinReady(10), withNodeSelector(map[string]string{"run": "yes"}))
	yes := map[string]string{"run": "yes"}
	rest := []runtime.Object{
		newNode("a", nodeLabels(yes)), newNode("b", nodeLabels(yes)), newNode("c", nodeLabels(yes)), newNode("d", nodeLabels(yes)),
		newNode("no"),
		currentRevision(t, ds, 1),
		daemonPod(ds, "available", "a", ready),
		daemonPod(ds, "just-ready", "b", readyFor(time.Second)),
		daemonPod(ds, "old", "c", oldRevision),
		daemonPod(ds, "misscheduled", "no", ready),
	}
	f := newFixture(t, objs(ds, rest...)...)
	// manage deletes the misscheduled pod; status counts what it saw.
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	want := apps.DaemonSetStatus{
		ObservedGeneration: 2, DesiredNumberScheduled: 4, CurrentNumberScheduled: 3, NumberMisscheduled: 1,
		NumberReady: 2, NumberAvailable: 1, UpdatedNumberScheduled: 2, NumberUnavailable: 3,
	}
	if st := f.statusUpdates(); len(st) != 1 || !reflect.DeepEqual(st[0].Status, want) {
		t.Fatalf("status writes %v, want one of %+v", st, want)
	}
	if f.c.queue.Len() != 0 {
		t.Error("requeued at once")
	}

	// Up to date: no write.
	f = newFixture(t, objs(newDS(withGeneration(2), withMinReady(10), withNodeSelector(yes), withStatus(want)), rest...)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if st := f.statusUpdates(); len(st) != 0 {
		t.Errorf("status written: %+v", st[0].Status)
	}
}

func TestStatusWhileWaiting(t *testing.T) {
	ds := newDS(withGeneration(2))
	f := newFixture(t, objs(ds, newNode("n"), currentRevision(t, ds, 1))...)
	logger, _ := ktesting.NewTestContext(t)
	f.c.expectations.ExpectCreations(logger, "ns/web", 1)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f.pods.Templates) != 0 {
		t.Error("created pods while waiting")
	}
	st := f.statusUpdates()
	if len(st) != 1 || st[0].Status.ObservedGeneration != 0 || st[0].Status.DesiredNumberScheduled != 1 {
		t.Errorf("status writes %+v", st)
	}
}

func TestSelectingAllAndDeleting(t *testing.T) {
	f := newFixture(t, objs(newDS(func(ds *apps.DaemonSet) { ds.Spec.Selector = &metav1.LabelSelector{} }), newNode("n"))...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if ev := f.events(); len(ev) != 1 || ev[0] != "Warning SelectingAll This daemon set is selecting all pods. A non-empty selector is required." {
		t.Errorf("events %q", ev)
	}
	f = newFixture(t, objs(newDS(func(ds *apps.DaemonSet) { ds.DeletionTimestamp = &metav1.Time{Time: t0} }), newNode("n"))...)
	if err := f.sync(t); err != nil || len(f.actions()) != 0 || len(f.pods.Templates) != 0 {
		t.Errorf("DaemonSet being deleted: %v, actions %v", err, f.actions())
	}
	f = newFixture(t, newNode("n"))
	if err := f.sync(t); err != nil || len(f.actions()) != 0 {
		t.Errorf("DaemonSet gone: %v, actions %v", err, f.actions())
	}
}

func TestAdoptsOrphans(t *testing.T) {
	ds := newDS()
	f := newFixture(t, objs(ds, newNode("n"), currentRevision(t, ds, 1), daemonPod(ds, "orphan", "n", orphan))...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f.pods.Patches) != 1 || !strings.Contains(string(f.pods.Patches[0]), `"uid":"ds-uid"`) {
		t.Errorf("patches %s", f.pods.Patches)
	}
	if len(f.pods.Templates) != 0 {
		t.Errorf("created %d pods beside the adopted one", len(f.pods.Templates))
	}
	if want := []string{"get daemonsets", "update daemonsets/status"}; !reflect.DeepEqual(f.actions(), want) {
		t.Errorf("actions %v, want %v", f.actions(), want)
	}
}

// The last sync deleted an old pod; the cache does not show it yet. While
// this sync reads, the deletion is observed and the expectations become
// satisfied: the sync must still only write status, since the pods it read
// predate that observation (it used to delete the pod a second time).
func TestExpectationsSatisfiedMidSyncDoNotActOnOlderPods(t *testing.T) {
	ds := newDS(withGeneration(2))
	old := daemonPod(ds, "old", "n", oldRevision, ready)
	f := newFixture(t, objs(ds, newNode("n"), old)...)
	logger, _ := ktesting.NewTestContext(t)
	f.c.expectations.ExpectDeletions(logger, "ns/web", []string{"ns/old"})
	// The sync creates the current revision, reading the cache: the
	// deletion is observed meanwhile.
	f.client.PrependReactor("create", "controllerrevisions", func(clienttesting.Action) (bool, runtime.Object, error) {
		f.c.expectations.DeletionObserved(logger, "ns/web", "ns/old")
		return false, nil, nil
	})
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f.pods.Deleted) != 0 {
		t.Errorf("deleted %v again", f.pods.Deleted)
	}
	if !f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		t.Fatal("the deletion was not observed during the sync")
	}
	// The next sync reads the pod as the cache now has it: being deleted.
	f.add(t, daemonPod(ds, "old", "n", oldRevision, ready, terminating))
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f.pods.Deleted) != 0 {
		t.Errorf("deleted %v", f.pods.Deleted)
	}
}
