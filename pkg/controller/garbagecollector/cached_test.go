package garbagecollector

import (
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

// withCache makes c read objects from a store holding objs, as if every
// resource had a synced monitor.
func withCache(t *testing.T, c *Controller, objs ...*metav1.PartialObjectMetadata) {
	t.Helper()
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, o := range objs {
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	c.store = func(schema.GroupResource) (cache.Store, bool) { return store, true }
}

// honourResourceVersion makes the fake API server refuse a deletion whose
// resourceVersion precondition is not live.
func honourResourceVersion(client interface {
	PrependReactor(verb, resource string, fn clienttesting.ReactionFunc)
}, live string) {
	client.PrependReactor("delete", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pre := a.(clienttesting.DeleteActionImpl).DeleteOptions.Preconditions
		if pre != nil && pre.ResourceVersion != nil && *pre.ResourceVersion != live {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "child", nil)
		}
		return false, nil, nil
	})
}

func verbs(client interface{ Actions() []clienttesting.Action }) []string {
	var out []string
	for _, a := range client.Actions() {
		out = append(out, a.GetVerb()+" "+a.(interface{ GetName() string }).GetName())
	}
	return out
}

func TestCachedDependentOfAbsentOwnerDeletedWithoutReadingIt(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	child := obj("ns", "child", "c", ref(cmKind, "parent", "p", false))
	child.ResourceVersion = "7"
	c, client := newDeleteTestController(t, partial(cmKind, child))
	withCache(t, c, partial(cmKind, child))
	honourResourceVersion(client, "7")
	item := snapshot{identity: objectReference{OwnerReference: coordinates(ref(cmKind, "child", "c", false)), Namespace: "ns"}}
	if err := c.attemptToDeleteItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	// The owner is read live (it is absent); the child only deleted.
	if got, want := verbs(client), []string{"get parent", "delete child"}; !slices.Equal(got, want) {
		t.Fatalf("requests = %v, want %v", got, want)
	}
	d := deletions(client)[0]
	pre := d.DeleteOptions.Preconditions
	if pre == nil || pre.UID == nil || *pre.UID != "c" || pre.ResourceVersion == nil || *pre.ResourceVersion != "7" {
		t.Errorf("preconditions = %+v, want uid c at resourceVersion 7", pre)
	}
	if *d.DeleteOptions.PropagationPolicy != metav1.DeletePropagationBackground {
		t.Errorf("propagation = %s", *d.DeleteOptions.PropagationPolicy)
	}
}

// A cache behind the API server: the child gained an owner that exists.
// The cached deletion is refused, the live read finds the owner, and the
// child stays.
func TestCachedDependentChangedSinceIsDecidedLive(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cached := obj("ns", "child", "c", ref(cmKind, "parent", "p", false))
	cached.ResourceVersion = "7"
	live := obj("ns", "child", "c", ref(cmKind, "parent", "p", false), ref(cmKind, "adopter", "a", false))
	live.ResourceVersion = "8"
	c, client := newDeleteTestController(t, partial(cmKind, live), partial(cmKind, obj("ns", "adopter", "a")))
	withCache(t, c, partial(cmKind, cached))
	honourResourceVersion(client, "8")
	item := snapshot{identity: objectReference{OwnerReference: coordinates(ref(cmKind, "child", "c", false)), Namespace: "ns"}}
	if err := c.attemptToDeleteItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	// The dangling reference is removed by a patch; the child is not
	// deleted (its one attempt was refused).
	want := []string{"get parent", "delete child", "get child", "get adopter", "patch child"}
	if got := verbs(client); !slices.Equal(got, want) {
		t.Fatalf("requests = %v, want %v", got, want)
	}
}

// What the cache cannot decide alone goes live: an object with an owner
// that exists, and one not cached at all.
func TestCacheLeavesOtherDecisionsToTheLivePath(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	child := obj("ns", "child", "c", ref(cmKind, "parent", "p", false))
	c, client := newDeleteTestController(t, partial(cmKind, child), partial(cmKind, obj("ns", "parent", "p")))
	withCache(t, c, partial(cmKind, child))
	item := snapshot{identity: objectReference{OwnerReference: coordinates(ref(cmKind, "child", "c", false)), Namespace: "ns"}}
	if err := c.attemptToDeleteItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	if got, want := verbs(client), []string{"get parent", "get child", "get parent"}; !slices.Equal(got, want) {
		t.Fatalf("requests = %v, want %v", got, want)
	}

	c, client = newDeleteTestController(t, partial(cmKind, child))
	withCache(t, c)
	if err := c.attemptToDeleteItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	if got, want := verbs(client), []string{"get child", "get parent", "delete child"}; !slices.Equal(got, want) {
		t.Fatalf("requests = %v, want %v", got, want)
	}
}
