package history

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var (
	setKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	data    = runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"x"}}}}}`)}
)

func parent() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid"}}
}

// TestHashMatchesUpstream pins the hash to the values upstream's
// history.HashControllerRevision gives for the same data (computed with
// k8s.io/kubernetes v1.37.1): a revision written by either controller
// manager has the same name.
func TestHashMatchesUpstream(t *testing.T) {
	rev := &appsv1.ControllerRevision{Data: data}
	if got := Hash(rev, nil); got != "5f6d948ccf" {
		t.Errorf("Hash(nil) = %s, want upstream's 5f6d948ccf", got)
	}
	if got := Hash(rev, ptr.To[int32](3)); got != "764856466b" {
		t.Errorf("Hash(3) = %s, want upstream's 764856466b", got)
	}
	if got := Name(strings.Repeat("a", 300), "h"); len(got) != maxPrefix+2 {
		t.Errorf("long name has %d characters", len(got))
	}
}

func TestNew(t *testing.T) {
	rev := New(parent(), setKind, map[string]string{"app": "x"}, data, 3, nil)
	if rev.Name != "web-5f6d948ccf" || rev.Namespace != "ns" || rev.Revision != 3 ||
		rev.Labels["app"] != "x" || rev.Labels[HashLabel] != "5f6d948ccf" {
		t.Errorf("revision = %+v", rev.ObjectMeta)
	}
	ref := metav1.GetControllerOf(rev)
	if ref == nil || ref.UID != "set-uid" || ref.Kind != "StatefulSet" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controllerRef = %+v", ref)
	}
}

func TestCreateCollision(t *testing.T) {
	ctx := context.Background()
	other := New(parent(), setKind, nil, runtime.RawExtension{Raw: []byte(`{"other":1}`)}, 1, nil)
	rev := New(parent(), setKind, nil, data, 1, nil)
	other.Name = Name("web", Hash(rev, ptr.To[int32](0))) // the first name tried, with other data
	client := fake.NewClientset(other)
	c := Client{Client: client}

	collisions := int32(0)
	created, err := c.Create(ctx, parent(), rev, &collisions)
	if err != nil {
		t.Fatal(err)
	}
	if collisions != 1 || created.Name != "web-"+Hash(rev, ptr.To[int32](1)) {
		t.Errorf("created %s with collisionCount %d", created.Name, collisions)
	}
	// The same data again: the existing revision, no new collision.
	again, err := c.Create(ctx, parent(), rev, &collisions)
	if err != nil || again.Name != created.Name || collisions != 1 {
		t.Errorf("second create: %v, %v, collisions %d", again, err, collisions)
	}
	if _, err := c.Create(ctx, parent(), rev, nil); err == nil {
		t.Error("nil collisionCount accepted")
	}
}

func TestListAndSort(t *testing.T) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &appsv1.ControllerRevision{}, 0, cache.Indexers{})
	if err := AddIndex(informer); err != nil {
		t.Fatal(err)
	}
	if err := AddIndex(informer); err != nil {
		t.Fatalf("second AddIndex: %v", err)
	}
	now := metav1.Now()
	mk := func(name string, rev int64, created metav1.Time, owner string, lbl string) *appsv1.ControllerRevision {
		r := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: created,
			Labels: map[string]string{"app": lbl}}, Revision: rev}
		if owner != "" {
			r.OwnerReferences = []metav1.OwnerReference{{UID: "x", Controller: ptr.To(true)}}
			r.OwnerReferences[0].UID = types.UID(owner)
		}
		return r
	}
	later := metav1.NewTime(now.Add(time.Second))
	for _, r := range []*appsv1.ControllerRevision{
		mk("b", 2, now, "set-uid", "x"),
		mk("a", 2, now, "set-uid", "x"),
		mk("c", 1, later, "", "x"),      // orphan, selected
		mk("d", 1, now, "", "y"),        // orphan, not selected
		mk("e", 1, now, "someone", "x"), // someone else's
	} {
		if err := informer.GetIndexer().Add(r); err != nil {
			t.Fatal(err)
		}
	}
	revs, err := List(informer.GetIndexer(), parent(), labels.SelectorFromSet(labels.Set{"app": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	Sort(revs)
	var got []string
	for _, r := range revs {
		got = append(got, r.Name)
	}
	if strings.Join(got, ",") != "c,a,b" {
		t.Errorf("listed and sorted: %v, want c,a,b", got)
	}
	if eq := FindEqual(revs, &appsv1.ControllerRevision{}); len(eq) != 3 {
		t.Errorf("FindEqual of empty data = %d revisions", len(eq))
	}
	if Equal(nil, revs[0]) || !Equal(nil, nil) {
		t.Error("Equal with nil")
	}
}
