package garbagecollector

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

type testMapper struct{ meta.RESTMapper }

func (testMapper) Reset() {}

func newDeleteTestController(t *testing.T, objs ...runtime.Object) (*Controller, *metadatafake.FakeMetadataClient) {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(cmKind, meta.RESTScopeNamespace)
	m.Add(nsKind, meta.RESTScopeRoot)
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme, objs...)
	c := newController("garbage-collector-controller", 1, client, nil, testMapper{m}, nil, nil, nil, nil)
	return c, client
}

func partial(kind schema.GroupVersionKind, m *metav1.ObjectMeta) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: kind.GroupVersion().String(), Kind: kind.Kind}, ObjectMeta: *m}
}

func deletions(client *metadatafake.FakeMetadataClient) []clienttesting.DeleteActionImpl {
	var out []clienttesting.DeleteActionImpl
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestOwnerWithOtherUIDIsDanglingAndDependentDeletedInBackground(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	child := obj("ns", "child", "c", ref(cmKind, "parent", "old-uid", false))
	c, client := newDeleteTestController(t, partial(cmKind, obj("ns", "parent", "new-uid")), partial(cmKind, child))
	item := snapshot{identity: objectReference{OwnerReference: coordinates(ref(cmKind, "child", "c", false)), Namespace: "ns"}}
	if err := c.attemptToDeleteItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	d := deletions(client)
	if len(d) != 1 || d[0].Name != "child" || *d[0].DeleteOptions.PropagationPolicy != metav1.DeletePropagationBackground {
		t.Fatalf("deletions = %+v", d)
	}
	if _, ok := c.builder.absentOwners.Get(objectReference{OwnerReference: coordinates(child.OwnerReferences[0]), Namespace: "ns"}); !ok {
		t.Errorf("absent owner not cached")
	}
}

func TestClusterScopedDependentOfNamespacedOwnerIsNotRetried(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	item := obj("", "n", "n", ref(cmKind, "parent", "p", false))
	c, client := newDeleteTestController(t, partial(nsKind, item))
	s := snapshot{identity: objectReference{OwnerReference: coordinates(ref(nsKind, "n", "n", false))}}
	err := c.attemptToDeleteItem(ctx, s)
	if !errors.Is(err, errNamespacedOwnerOfClusterScoped) {
		t.Fatalf("err = %v", err)
	}
	if len(deletions(client)) != 0 {
		t.Errorf("deleted a cluster-scoped object over an invalid reference")
	}
	c.builder.graph.update(func() { c.builder.graph.write(newNode(s.identity, item.OwnerReferences)) })
	if err := c.attemptToDelete(ctx, "n"); err != nil {
		t.Errorf("attemptToDelete = %v, want nil (forget)", err)
	}
}

func TestMissingObjectQueuesVirtualDelete(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c, _ := newDeleteTestController(t)
	s := snapshot{identity: objectReference{OwnerReference: coordinates(ref(cmKind, "gone", "g", false)), Namespace: "ns"}, virtual: true}
	if err := c.attemptToDeleteItem(ctx, s); !errors.Is(err, errVirtualDelete) {
		t.Fatalf("err = %v", err)
	}
	if c.builder.changes.Len() != 1 {
		t.Errorf("no virtual delete event queued")
	}
}

// TestUnblockBeforeForegroundDeleteKeepsReferences covers the dependency
// circle (upstream's conformance spec): an object whose owner waits for its
// dependents and that has a dependent itself waiting gets its references
// unblocked, then is deleted in the foreground. The deletion after a real
// unblock always conflicts (the patch moved the resourceVersion), so the
// retry finds nothing left to unblock; it must keep the references (a null
// list in the patch used to delete them all, and the object, ownerless, was
// never collected).
func TestUnblockBeforeForegroundDeleteKeepsReferences(t *testing.T) {
	deleting := obj("ns", "owner", "o")
	deleting.DeletionTimestamp = &metav1.Time{}
	deleting.Finalizers = []string{metav1.FinalizerDeleteDependents}
	for _, tc := range []struct {
		name   string
		owners []metav1.OwnerReference
	}{
		{"first attempt: blocking reference", []metav1.OwnerReference{ref(cmKind, "owner", "o", true)}},
		{"retry: already unblocked", []metav1.OwnerReference{ref(cmKind, "owner", "o", false)}},
		{"retry, two owners: one unblocked", []metav1.OwnerReference{ref(cmKind, "owner", "o", false), ref(cmKind, "gone", "g", true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			item := obj("ns", "item", "i", tc.owners...)
			c, client := newDeleteTestController(t, partial(cmKind, deleting), partial(cmKind, item))
			// Keep the object on delete, to read its references afterwards.
			client.PrependReactor("delete", "*", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
			s := snapshot{
				identity:                     objectReference{OwnerReference: coordinates(ref(cmKind, "item", "i", false)), Namespace: "ns"},
				owners:                       tc.owners,
				dependents:                   []objectReference{{OwnerReference: coordinates(ref(cmKind, "dep", "d", false)), Namespace: "ns"}},
				dependentsDeletingDependents: true,
			}
			if err := c.attemptToDeleteItem(ctx, s); err != nil {
				t.Fatal(err)
			}
			d := deletions(client)
			if len(d) != 1 || d[0].Name != "item" || *d[0].DeleteOptions.PropagationPolicy != metav1.DeletePropagationForeground {
				t.Fatalf("deletions = %+v, want item in the foreground", d)
			}
			live, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns").Get(ctx, "item", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(live.OwnerReferences) != len(tc.owners) {
				t.Fatalf("ownerReferences after the unblock = %+v, want all %d kept", live.OwnerReferences, len(tc.owners))
			}
			for _, r := range live.OwnerReferences {
				if isBlocking(r) {
					t.Errorf("reference %s still blocks", r.Name)
				}
			}
		})
	}
}

func TestUnblockPatchLeavesOutUnchangedReferences(t *testing.T) {
	for _, tc := range []struct {
		owners []metav1.OwnerReference
		want   string
	}{
		{nil, `{"metadata":{"uid":"i"}}`},
		{[]metav1.OwnerReference{ref(cmKind, "a", "a", false)}, `{"metadata":{"uid":"i"}}`},
		{[]metav1.OwnerReference{ref(cmKind, "a", "a", false), ref(cmKind, "b", "b", true)},
			`{"metadata":{"uid":"i","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"b","uid":"b","blockOwnerDeletion":false}]}}`},
	} {
		got, err := unblockOwnerReferencesStrategicMergePatch("i", tc.owners)
		if err != nil || string(got) != tc.want {
			t.Errorf("unblock patch of %v = %s, %v; want %s", tc.owners, got, err, tc.want)
		}
	}
}
