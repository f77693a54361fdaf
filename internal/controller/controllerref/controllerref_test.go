package controllerref

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var (
	rsKind     = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	selected   = map[string]string{"app": "web"}
	unselected = map[string]string{"app": "other"}
	deleting   = &metav1.Time{}
)

func controllerObj(deleted bool) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid"}}
	if deleted {
		rs.DeletionTimestamp = deleting
	}
	return rs
}

func ref(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "x", UID: uid, Controller: ptr.To(true)}
}

type podOpt func(*v1.Pod)

func pod(name string, lbls map[string]string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), Labels: lbls}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ownedBy(uid types.UID) podOpt {
	return func(p *v1.Pod) { p.OwnerReferences = append(p.OwnerReferences, ref(uid)) }
}
func inNamespace(ns string) podOpt { return func(p *v1.Pod) { p.Namespace = ns } }
func beingDeleted(p *v1.Pod)       { p.DeletionTimestamp = deleting }

// patches records patches by object name and fails them with err.
type patches struct {
	got map[string]string
	err error
}

func (p *patches) patch(_ context.Context, _, name string, data []byte) error {
	p.got[name] = string(data)
	return p.err
}

const (
	adoptJSON   = `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}],"uid":"p-uid"}}`
	releaseJSON = `{"metadata":{"uid":"p-uid","ownerReferences":[{"$patch":"delete","uid":"rs-uid"}]}}`
)

func TestClaimPods(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Invalid(field.NewPath("metadata"), "", "")})
	tests := []struct {
		name              string
		pod               *v1.Pod
		controllerDeleted bool
		filterOut         bool
		patchErr          error
		canAdoptErr       error
		wantClaimed       bool
		wantPatch         string
		wantErr           bool
	}{
		{name: "orphan adopted", pod: pod("p", selected), wantClaimed: true, wantPatch: adoptJSON},
		{name: "orphan not selected", pod: pod("p", unselected)},
		{name: "orphan filtered out", pod: pod("p", selected), filterOut: true},
		{name: "orphan being deleted", pod: pod("p", selected, beingDeleted)},
		{name: "orphan in another namespace", pod: pod("p", selected, inNamespace("other"))},
		{name: "orphan while controller is deleted", pod: pod("p", selected), controllerDeleted: true},
		{name: "orphan gone", pod: pod("p", selected), patchErr: notFound, wantPatch: adoptJSON},
		{name: "adoption fails", pod: pod("p", selected), patchErr: errors.New("boom"), wantPatch: adoptJSON, wantErr: true},
		{name: "adoption refused", pod: pod("p", selected), canAdoptErr: errors.New("deleted"), wantErr: true},
		{name: "someone else's", pod: pod("p", selected, ownedBy("other-uid"))},
		{name: "ours and selected", pod: pod("p", selected, ownedBy("rs-uid")), wantClaimed: true},
		{name: "ours and selected while controller is deleted", pod: pod("p", selected, ownedBy("rs-uid")), controllerDeleted: true, wantClaimed: true},
		{name: "ours, not selected: released", pod: pod("p", unselected, ownedBy("rs-uid")), wantPatch: releaseJSON},
		{name: "ours, filtered out: released", pod: pod("p", selected, ownedBy("rs-uid")), filterOut: true, wantPatch: releaseJSON},
		{name: "ours, not selected, controller deleted: kept as is", pod: pod("p", unselected, ownedBy("rs-uid")), controllerDeleted: true},
		{name: "release of a pod gone", pod: pod("p", unselected, ownedBy("rs-uid")), patchErr: notFound, wantPatch: releaseJSON},
		{name: "release refused as invalid", pod: pod("p", unselected, ownedBy("rs-uid")), patchErr: invalid, wantPatch: releaseJSON},
		{name: "release fails", pod: pod("p", unselected, ownedBy("rs-uid")), patchErr: errors.New("boom"), wantPatch: releaseJSON, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &patches{got: map[string]string{}, err: tc.patchErr}
			m := NewPodManager(p.patch, controllerObj(tc.controllerDeleted), rsKind, labels.SelectorFromSet(selected),
				func(context.Context) error { return tc.canAdoptErr })
			var filters []func(*v1.Pod) bool
			if tc.filterOut {
				filters = append(filters, func(*v1.Pod) bool { return false })
			}
			claimed, err := m.Claim(context.Background(), []*v1.Pod{tc.pod}, filters...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := len(claimed) == 1; got != tc.wantClaimed {
				t.Errorf("claimed = %v, want %v", got, tc.wantClaimed)
			}
			if got := p.got["p"]; got != tc.wantPatch {
				t.Errorf("patch = %s\nwant    %s", got, tc.wantPatch)
			}
		})
	}
}

func TestCanAdoptRunsOncePerManager(t *testing.T) {
	calls := 0
	p := &patches{got: map[string]string{}}
	m := NewPodManager(p.patch, controllerObj(false), rsKind, labels.SelectorFromSet(selected), func(context.Context) error {
		calls++
		return errors.New("gone")
	})
	claimed, err := m.Claim(context.Background(), []*v1.Pod{pod("a", selected), pod("b", selected), pod("c", selected, ownedBy("rs-uid"))})
	if calls != 1 {
		t.Errorf("canAdopt ran %d times, want 1", calls)
	}
	if len(claimed) != 1 || claimed[0].Name != "c" {
		t.Errorf("claimed %v, want only c", claimed)
	}
	if err == nil || !strings.Contains(err.Error(), "can't adopt Pod ns/a (a-uid): gone") {
		t.Errorf("err = %v", err)
	}
	if len(p.got) != 0 {
		t.Errorf("patched %v", p.got)
	}
}

func TestFinalizersInPatches(t *testing.T) {
	p := &patches{got: map[string]string{}}
	m := NewPodManager(p.patch, controllerObj(false), rsKind, labels.SelectorFromSet(selected), nil, "batch.kubernetes.io/job-tracking")
	_, err := m.Claim(context.Background(), []*v1.Pod{pod("a", selected), pod("b", unselected, ownedBy("rs-uid"))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.got["a"], `"finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("adopt patch %s", p.got["a"])
	}
	if !strings.Contains(p.got["b"], `"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("release patch %s", p.got["b"])
	}
}

func TestClaimReplicaSets(t *testing.T) {
	p := &patches{got: map[string]string{}}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", UID: "d-uid"}}
	m := NewReplicaSetManager(p.patch, deploy, appsv1.SchemeGroupVersion.WithKind("Deployment"), labels.SelectorFromSet(selected), nil)
	orphan := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs1", UID: "rs1-uid", Labels: selected}}
	claimed, err := m.Claim(context.Background(), []*appsv1.ReplicaSet{orphan})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %v, err %v", claimed, err)
	}
	want := `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"d-uid","controller":true,"blockOwnerDeletion":true}],"uid":"rs1-uid"}}`
	if p.got["rs1"] != want {
		t.Errorf("patch = %s", p.got["rs1"])
	}
}

func TestRecheckDeletionTimestamp(t *testing.T) {
	tests := []struct {
		name    string
		obj     metav1.Object
		err     error
		wantErr string
	}{
		{name: "alive", obj: controllerObj(false)},
		{name: "deleted", obj: controllerObj(true), wantErr: "ns/web has just been deleted at"},
		{name: "read fails", err: errors.New("uid changed"), wantErr: "can't recheck DeletionTimestamp: uid changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := RecheckDeletionTimestamp(func(context.Context) (metav1.Object, error) { return tc.obj, tc.err })(context.Background())
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestIndexes(t *testing.T) {
	podInformer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
	for range 2 { // a second controller adding the index is fine
		if err := AddPodControllerIndex(podInformer); err != nil {
			t.Fatal(err)
		}
	}
	store := podInformer.GetIndexer()
	for _, p := range []*v1.Pod{
		pod("mine", selected, ownedBy("rs-uid")),
		pod("orphan", selected),
		pod("theirs", selected, ownedBy("other-uid")),
		pod("elsewhere", selected, inNamespace("other")),
	} {
		_ = store.Add(p)
	}
	names := func(pods []*v1.Pod) map[string]bool {
		out := map[string]bool{}
		for _, p := range pods {
			out[p.Name] = true
		}
		return out
	}
	rs := controllerObj(false)
	rs.Name = "x" // ref() names the controller x
	pods, err := PodsByOwner(store, rs, "ReplicaSet", true)
	if got := names(pods); err != nil || len(got) != 2 || !got["mine"] || !got["orphan"] {
		t.Errorf("with orphans: %v, %v", got, err)
	}
	pods, _ = PodsByOwner(store, rs, "ReplicaSet", false)
	if got := names(pods); len(got) != 1 || !got["mine"] {
		t.Errorf("without orphans: %v", got)
	}
	if pods, _ := PodsByOwner(store, rs, "ReplicationController", false); len(pods) != 0 {
		t.Errorf("another kind of the same name and UID: %v", names(pods))
	}
	if _, err := PodsByOwner(store, rs, "", false); err == nil {
		t.Error("no error without a kind")
	}

	rsInformer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &appsv1.ReplicaSet{}, 0, cache.Indexers{})
	if err := AddControllerUIDIndex(rsInformer); err != nil {
		t.Fatal(err)
	}
	owned := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", OwnerReferences: []metav1.OwnerReference{ref("d-uid")}}}
	_ = rsInformer.GetIndexer().Add(owned)
	_ = rsInformer.GetIndexer().Add(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
	got, err := ByControllerUID[*appsv1.ReplicaSet](rsInformer.GetIndexer(), "d-uid")
	if err != nil || len(got) != 1 || got[0].Name != "a" {
		t.Errorf("ByControllerUID = %v, %v", got, err)
	}
}
