package garbagecollector

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

var (
	cmKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nsKind = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

func ref(kind schema.GroupVersionKind, name, uid string, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: kind.GroupVersion().String(), Kind: kind.Kind, Name: name, UID: types.UID(uid)}
	if block {
		r.BlockOwnerDeletion = ptr.To(true)
	}
	return r
}

func obj(ns, name, uid string, owners ...metav1.OwnerReference) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), OwnerReferences: owners}
}

func newTestBuilder() (*builder, *record.FakeRecorder) {
	r := record.NewFakeRecorder(10)
	return newBuilder(r), r
}

func (b *builder) apply(t *testing.T, e *event) {
	logger, _ := ktesting.NewTestContext(t)
	b.graph.update(func() { b.process(logger, e) })
}

// drain returns the keys queued in q, in order, without duplicates.
func drain(q interface {
	Len() int
	Get() (string, bool)
	Done(string)
}) []string {
	var out []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		out = append(out, k)
	}
	return out
}

func TestDependentCreatesVirtualOwnerThatIsVerified(t *testing.T) {
	b, _ := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "child", "c", ref(cmKind, "parent", "p", false))})
	s, ok := b.graph.snapshotOf("p")
	if !ok || !s.virtual || s.identity.Namespace != "ns" || len(s.dependents) != 1 {
		t.Fatalf("virtual owner = %+v, %v", s, ok)
	}
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "p" {
		t.Errorf("attemptToDelete = %v, want [p]", got)
	}
	// The informer observes the owner: the node is no longer virtual.
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "parent", "p")})
	if s, _ := b.graph.snapshotOf("p"); s.virtual {
		t.Errorf("owner still virtual after it was observed")
	}
	// The owner is deleted: its dependent is queued.
	b.apply(t, &event{eventType: deleteEvent, gvk: cmKind, obj: obj("ns", "parent", "p")})
	if b.graph.has("p") {
		t.Errorf("deleted owner still in graph")
	}
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "c" {
		t.Errorf("attemptToDelete = %v, want [c]", got)
	}
	if _, ok := b.absentOwners.Get(objectReference{OwnerReference: coordinates(ref(cmKind, "parent", "p", false)), Namespace: "ns"}); !ok {
		t.Errorf("deleted owner with dependents not recorded as absent")
	}
}

func TestVirtualDeleteRemovesOnlyUnambiguousVirtualNodes(t *testing.T) {
	b, _ := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "a", "a", ref(cmKind, "parent", "p", false))})
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "b", "b", ref(nsKind, "other-name", "p", false))})
	drain(b.attemptToDelete)
	b.enqueueVirtualDelete(objectReference{OwnerReference: coordinates(ref(cmKind, "parent", "p", false)), Namespace: "ns"})
	e, _ := b.changes.Get()
	b.changes.Done(e)
	b.apply(t, e)
	s, ok := b.graph.snapshotOf("p")
	if !ok {
		t.Fatalf("virtual node removed although a dependent refers to it otherwise")
	}
	if s.identity.Kind != "Namespace" {
		t.Errorf("replacement identity = %v, want the alternate Namespace one", s.identity)
	}
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "a" {
		t.Errorf("attemptToDelete = %v, want the matching dependent [a]", got)
	}
}

func TestOwnerInOtherNamespaceRecordsOwnerRefInvalidNamespace(t *testing.T) {
	b, rec := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns1", "parent", "p")})
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns2", "child", "c", ref(cmKind, "parent", "p", false))})
	select {
	case e := <-rec.Events:
		want := `Warning OwnerRefInvalidNamespace ownerRef [v1/ConfigMap, namespace: ns2, name: parent, uid: p] does not exist in namespace "ns2"`
		if e != want {
			t.Errorf("event = %q\nwant    %q", e, want)
		}
	default:
		t.Errorf("no OwnerRefInvalidNamespace event")
	}
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "c" {
		t.Errorf("attemptToDelete = %v, want [c]", got)
	}
}

func TestClusterScopedOwnerIsValidFromAnyNamespace(t *testing.T) {
	b, rec := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: nsKind, obj: obj("", "owner", "o")})
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "child", "c", ref(nsKind, "owner", "o", false))})
	if len(rec.Events) != 0 || b.attemptToDelete.Len() != 0 {
		t.Errorf("events %d, queued %v; want none", len(rec.Events), drain(b.attemptToDelete))
	}
}

func TestForegroundAndOrphanTransitions(t *testing.T) {
	b, _ := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "parent", "p")})
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "child", "c", ref(cmKind, "parent", "p", true))})
	drain(b.attemptToDelete)

	deleting := obj("ns", "parent", "p")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	deleting.Finalizers = []string{metav1.FinalizerDeleteDependents}
	b.apply(t, &event{eventType: updateEvent, gvk: cmKind, obj: deleting, oldObj: obj("ns", "parent", "p")})
	s, _ := b.graph.snapshotOf("p")
	if !s.deletingDependents || s.blockingCount != 1 || len(s.blocking) != 1 {
		t.Errorf("owner snapshot = %+v", s)
	}
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "c,p" {
		t.Errorf("attemptToDelete = %v, want [c p]", got)
	}
	// The dependent drops its blocking reference: the owner is rechecked.
	b.apply(t, &event{eventType: updateEvent, gvk: cmKind, obj: obj("ns", "child", "c")})
	if got := drain(b.attemptToDelete); strings.Join(got, ",") != "p" {
		t.Errorf("attemptToDelete = %v, want [p]", got)
	}

	orphaning := obj("ns", "o", "o")
	orphaning.DeletionTimestamp = ptr.To(metav1.Now())
	orphaning.Finalizers = []string{metav1.FinalizerOrphanDependents}
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: orphaning})
	if got := drain(b.attemptToOrphan); strings.Join(got, ",") != "o" {
		t.Errorf("attemptToOrphan = %v, want [o]", got)
	}
}

func TestDecide(t *testing.T) {
	owner := ref(cmKind, "a", "a", true)
	other := ref(cmKind, "b", "b", false)
	withDeps := snapshot{dependents: []objectReference{{}}}
	policy := func(a action) string {
		if a.policy == nil {
			return ""
		}
		return string(*a.policy)
	}
	for _, tc := range []struct {
		name                     string
		item                     snapshot
		finalizers               []string
		solid, dangling, waiting []metav1.OwnerReference
		wantPolicy               string
		wantRemove               int
		wantUnblock              bool
	}{
		{name: "solid owner keeps item", solid: []metav1.OwnerReference{owner}},
		{name: "solid plus dangling removes the dangling ref", solid: []metav1.OwnerReference{owner}, dangling: []metav1.OwnerReference{other}, wantRemove: 1},
		{name: "solid plus waiting removes the waiting ref", solid: []metav1.OwnerReference{owner}, waiting: []metav1.OwnerReference{other}, wantRemove: 1},
		{name: "all dangling: background", dangling: []metav1.OwnerReference{owner}, wantPolicy: "Background"},
		{name: "dangling with orphan finalizer: orphan", dangling: []metav1.OwnerReference{owner}, finalizers: []string{metav1.FinalizerOrphanDependents}, wantPolicy: "Orphan"},
		{name: "dangling with foreground finalizer: foreground", dangling: []metav1.OwnerReference{owner}, finalizers: []string{metav1.FinalizerDeleteDependents}, wantPolicy: "Foreground"},
		{name: "waiting owner, item without dependents: background", waiting: []metav1.OwnerReference{owner}, wantPolicy: "Background"},
		{name: "waiting owner, item with dependents: foreground", item: withDeps, waiting: []metav1.OwnerReference{owner}, wantPolicy: "Foreground"},
		{name: "cycle: unblock then foreground", item: snapshot{dependents: withDeps.dependents, dependentsDeletingDependents: true}, waiting: []metav1.OwnerReference{owner}, wantPolicy: "Foreground", wantUnblock: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := decide(tc.item, tc.finalizers, tc.solid, tc.dangling, tc.waiting)
			if policy(a) != tc.wantPolicy || len(a.removeRefs) != tc.wantRemove || a.unblock != tc.wantUnblock {
				t.Errorf("decide = policy %q remove %v unblock %v", policy(a), a.removeRefs, a.unblock)
			}
		})
	}
}

func TestReferencesDiffs(t *testing.T) {
	a, b, c := ref(cmKind, "a", "a", false), ref(cmKind, "b", "b", false), ref(cmKind, "c", "c", false)
	b2 := ref(cmKind, "b", "b", true)
	added, removed, changed := referencesDiffs([]metav1.OwnerReference{a, b}, []metav1.OwnerReference{b2, c})
	if len(added) != 1 || added[0].UID != "c" || len(removed) != 1 || removed[0].UID != "a" || len(changed) != 1 || changed[0][1].UID != "b" {
		t.Errorf("added %v removed %v changed %v", added, removed, changed)
	}
}

func TestDOT(t *testing.T) {
	b, _ := newTestBuilder()
	b.apply(t, &event{eventType: addEvent, gvk: cmKind, obj: obj("ns", "child", "c", ref(cmKind, "parent", "p", false))})
	vs, es := toDOT(b.graph.nodes)
	var sb strings.Builder
	writeDOT(&sb, vs, es)
	out := sb.String()
	for _, want := range []string{"strict digraph full {", `"c" -> "p";`, "virtual=\"true\"", "ConfigMap.v1/child"} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT lacks %q:\n%s", want, out)
		}
	}
}
