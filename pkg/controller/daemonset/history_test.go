package daemonset

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// oldRev is a revision of ds for another image.
func oldRev(t *testing.T, ds *apps.DaemonSet, image string, rev int64) *apps.ControllerRevision {
	t.Helper()
	r := currentRevision(t, newDS(withImage(image)), rev)
	r.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)}
	return r
}

func TestHistoryRollback(t *testing.T) {
	// The DaemonSet's template is that of revision 1 again (kubectl
	// rollout undo): revision 1 becomes revision 3; nothing is created.
	ds := newDS()
	f := newFixture(t, objs(ds, newNode("n"), currentRevision(t, ds, 1), oldRev(t, ds, "img:2", 2))...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	var updated []*apps.ControllerRevision
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetResource().Resource == "controllerrevisions" {
			updated = append(updated, u.GetObject().(*apps.ControllerRevision))
		}
		if a.GetVerb() == "create" {
			t.Errorf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if len(updated) != 1 || updated[0].Name != currentRevision(t, ds, 1).Name || updated[0].Revision != 3 {
		t.Errorf("revision updates %+v", updated)
	}
	// The pods created carry the hash of the current revision.
	if h := f.pods.Templates[0].Labels[hashLabel]; h != currentHash(ds) {
		t.Errorf("pod hash %q", h)
	}
}

func TestHistoryCollision(t *testing.T) {
	// A revision of the current revision's name with other data: the
	// collision count is raised and the sync retried.
	ds := newDS()
	squatter := oldRev(t, ds, "img:2", 1)
	squatter.Name = currentRevision(t, ds, 1).Name
	f := newFixture(t, objs(ds, newNode("n"), squatter)...)
	err := f.sync(t)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("sync error %v, want AlreadyExists", err)
	}
	st := f.statusUpdates()
	if len(st) != 1 || !reflect.DeepEqual(st[0].Status.CollisionCount, ptr.To[int32](1)) {
		t.Fatalf("status writes %+v", st)
	}
	// With the new count, the next revision has another name.
	ds2 := newDS(withStatus(apps.DaemonSetStatus{CollisionCount: ptr.To[int32](1)}))
	f = newFixture(t, objs(ds2, newNode("n"), squatter)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if h := f.pods.Templates[0].Labels[hashLabel]; h == squatter.Labels[hashLabel] || h != currentHash(ds2) {
		t.Errorf("pod hash %q", h)
	}
}

func TestHistoryCleanup(t *testing.T) {
	ds := newDS(func(ds *apps.DaemonSet) { ds.Spec.RevisionHistoryLimit = ptr.To[int32](2) })
	rest := []runtime.Object{newNode("n"), currentRevision(t, ds, 6)}
	for i := 1; i <= 5; i++ {
		rest = append(rest, oldRev(t, ds, fmt.Sprintf("img:old%d", i), int64(i)))
	}
	// A live pod still runs revision 1: it stays.
	live := daemonPod(ds, "p", "n", ready)
	live.Labels[hashLabel] = currentHash(newDS(withImage("img:old1")))
	f := newFixture(t, objs(ds, append(rest, live)...)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range f.client.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok && a.GetResource().Resource == "controllerrevisions" {
			deleted = append(deleted, d.GetName())
		}
	}
	var want []string
	for _, img := range []string{"img:old2", "img:old3", "img:old4"} {
		want = append(want, "web-"+currentHash(newDS(withImage(img))))
	}
	if !reflect.DeepEqual(deleted, want) {
		t.Errorf("deleted %v, want %v (revisions 2 to 4)", deleted, want)
	}
}

func TestHistoryDedupAndLabels(t *testing.T) {
	ds := newDS()
	a := currentRevision(t, ds, 1)
	b := currentRevision(t, ds, 2)
	b.Name, b.UID, b.Labels = "web-b", "b-uid", map[string]string{"app": "web"} // no hash label yet
	pod := daemonPod(ds, "p", "n", ready)
	f := newFixture(t, objs(ds, newNode("n"), a, b, pod)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"update controllerrevisions", // web-b gets its name as hash label
		"patch pods",                 // p relabelled with web-b's hash
		"delete controllerrevisions", // the other one goes
		"update daemonsets/status",
	}
	if got := f.actions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("actions %v, want %v", got, want)
	}
	var patch []byte
	for _, act := range f.client.Actions() {
		if p, ok := act.(clienttesting.PatchAction); ok {
			patch = p.GetPatch()
			if p.GetPatchType() != types.MergePatchType {
				t.Errorf("patch type %s", p.GetPatchType())
			}
		}
		if d, ok := act.(clienttesting.DeleteAction); ok && d.GetName() != a.Name {
			t.Errorf("deleted %s, want %s", d.GetName(), a.Name)
		}
	}
	if string(patch) != `{"metadata":{"labels":{"controller-revision-hash":"web-b"}}}` {
		t.Errorf("patch %s", patch)
	}
	// The pod still carries the old hash in the cache but the template
	// generation of the current template: not replaced.
	if len(f.pods.Deleted) != 0 {
		t.Errorf("deleted %v", f.pods.Deleted)
	}
}
