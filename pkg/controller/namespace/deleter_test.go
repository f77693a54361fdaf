package namespace

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const nsName = "doomed"

var (
	configmapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// store is a metadata "apiserver": content by resource name, where a
// delete removes an item unless it has finalizers.
type store struct {
	mu      sync.Mutex
	items   map[string][]metav1.PartialObjectMetadata
	actions []string // verb/resource, in order
}

func item(name string, finalizers ...string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nsName, Finalizers: finalizers}}
}

func (s *store) client() *metadatafake.FakeMetadataClient {
	c := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	c.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		r := a.GetResource().Resource
		s.actions = append(s.actions, a.GetVerb()+"/"+r)
		switch a.GetVerb() {
		case "list":
			list := &metav1.List{}
			for i := range s.items[r] {
				list.Items = append(list.Items, runtime.RawExtension{Object: s.items[r][i].DeepCopy()})
			}
			return true, list, nil
		case "delete-collection", "delete":
			var kept []metav1.PartialObjectMetadata
			for _, it := range s.items[r] {
				named := a.GetVerb() == "delete-collection" || it.Name == a.(clienttesting.DeleteAction).GetName()
				if !named || len(it.Finalizers) > 0 {
					kept = append(kept, it)
				}
			}
			s.items[r] = kept
			return true, nil, nil
		}
		return false, nil, nil
	})
	return c
}

func (s *store) did(action string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.actions {
		if a == action {
			return true
		}
	}
	return false
}

func resourceList(gv string, rs ...metav1.APIResource) *metav1.APIResourceList {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: rs}
}

var allVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func standardResources() []*metav1.APIResourceList {
	return []*metav1.APIResourceList{
		resourceList("v1",
			metav1.APIResource{Name: "pods", Namespaced: true, Verbs: allVerbs},
			metav1.APIResource{Name: "configmaps", Namespaced: true, Verbs: allVerbs},
			// Not deletable: never touched.
			metav1.APIResource{Name: "bindings", Namespaced: true, Verbs: metav1.Verbs{"create"}}),
		// No deletecollection: listed and deleted one by one.
		resourceList("example.com/v1", metav1.APIResource{Name: "widgets", Namespaced: true,
			Verbs: metav1.Verbs{"delete", "get", "list"}}),
	}
}

type fixture struct {
	d       *deleter
	kube    *fake.Clientset
	store   *store
	clock   *clocktesting.FakeClock
	deleted time.Time
}

func newFixture(t *testing.T, discover func() ([]*metav1.APIResourceList, error), items map[string][]metav1.PartialObjectMetadata, pods ...runtime.Object) *fixture {
	t.Helper()
	deleted := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ns := &v1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: nsName, UID: "uid-1", DeletionTimestamp: &metav1.Time{Time: deleted}},
		Spec:       v1.NamespaceSpec{Finalizers: []v1.FinalizerName{"other.example.com/f", v1.FinalizerKubernetes}},
		Status:     v1.NamespaceStatus{Phase: v1.NamespaceActive},
	}
	kube := fake.NewClientset(append([]runtime.Object{ns}, pods...)...)
	kube.PrependReactor("create", "namespaces", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "finalize" {
			return false, nil, nil
		}
		return true, a.(clienttesting.CreateAction).GetObject(), nil
	})
	s := &store{items: items}
	clk := clocktesting.NewFakeClock(deleted.Add(6 * time.Second))
	return &fixture{
		d: &deleter{
			namespaces: kube.CoreV1().Namespaces(), pods: kube.CoreV1(), metadata: s.client(),
			discover: discover, finalizerToken: v1.FinalizerKubernetes, clock: clk,
		},
		kube: kube, store: s, clock: clk, deleted: deleted,
	}
}

func (f *fixture) namespace(t *testing.T) *v1.Namespace {
	t.Helper()
	ns, err := f.kube.CoreV1().Namespaces().Get(context.Background(), nsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// finalized returns the namespace sent to the finalize subresource.
func (f *fixture) finalized() *v1.Namespace {
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "finalize" {
			return a.(clienttesting.CreateAction).GetObject().(*v1.Namespace)
		}
	}
	return nil
}

func wantCondition(t *testing.T, ns *v1.Namespace, ct v1.NamespaceConditionType, status v1.ConditionStatus, reason, msg string) {
	t.Helper()
	c := findCondition(ns.Status.Conditions, ct)
	if c == nil {
		t.Fatalf("no %s condition", ct)
	}
	if c.Status != status || c.Reason != reason || !strings.Contains(c.Message, msg) {
		t.Errorf("%s = %s/%s/%q, want %s/%s/%q", ct, c.Status, c.Reason, c.Message, status, reason, msg)
	}
}

func TestDeleteEmptiesNamespaceAndFinalizes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), nil },
		map[string][]metav1.PartialObjectMetadata{
			"pods":       {item("p")},
			"configmaps": {item("a"), item("b")},
			"widgets":    {item("w")},
		})
	if err := f.d.Delete(ctx, nsName); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, a := range []string{"delete-collection/pods", "delete-collection/configmaps", "list/widgets", "delete/widgets"} {
		if !f.store.did(a) {
			t.Errorf("missing %s; actions %v", a, f.store.actions)
		}
	}
	if f.store.did("delete-collection/widgets") || f.store.did("delete-collection/bindings") {
		t.Errorf("unsupported operation attempted: %v", f.store.actions)
	}
	ns := f.namespace(t)
	if ns.Status.Phase != v1.NamespaceTerminating {
		t.Errorf("phase = %q", ns.Status.Phase)
	}
	for _, ct := range conditionTypes {
		ok := okConditions[ct]
		wantCondition(t, ns, ct, v1.ConditionFalse, ok.reason, ok.message)
	}
	fin := f.finalized()
	if fin == nil || len(fin.Spec.Finalizers) != 1 || fin.Spec.Finalizers[0] != "other.example.com/f" {
		t.Errorf("finalize = %+v, want only other.example.com/f kept", fin)
	}
}

func TestDeleteWaitsForPodsBeforeOtherContent(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	running := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: nsName},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30)}}
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), nil },
		map[string][]metav1.PartialObjectMetadata{
			"pods":       {item("p", "example.com/pod")},
			"configmaps": {item("a")},
		}, running)
	err := f.d.Delete(ctx, nsName)
	var rr *ResourcesRemainingError
	if !errors.As(err, &rr) || rr.Estimate != 30 {
		t.Fatalf("Delete = %v, want ResourcesRemainingError{30}", err)
	}
	if f.store.did("delete-collection/configmaps") {
		t.Error("configmaps deleted while pods remain")
	}
	if f.finalized() != nil {
		t.Error("finalized with pods remaining")
	}
	// As upstream, the remaining-content conditions are not computed on
	// the pods-only pass.
	wantCondition(t, f.namespace(t), v1.NamespaceContentRemaining, v1.ConditionFalse, "ContentRemoved", "All content successfully removed")

	// Past the grace period, a pod with a finalizer is waited for 15s.
	f.clock.SetTime(f.deleted.Add(31 * time.Second))
	err = f.d.Delete(ctx, nsName)
	if !errors.As(err, &rr) || rr.Estimate != finalizerEstimateSeconds {
		t.Fatalf("Delete = %v, want ResourcesRemainingError{15}", err)
	}
}

func TestDeleteReportsRemainingContentAndFinalizers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), nil },
		map[string][]metav1.PartialObjectMetadata{
			"configmaps": {item("a", "example.com/x"), item("b", "example.com/x", "example.com/y")},
			"widgets":    {item("w", "example.com/x")},
		})
	err := f.d.Delete(ctx, nsName)
	var rr *ResourcesRemainingError
	if !errors.As(err, &rr) || rr.Estimate != finalizerEstimateSeconds {
		t.Fatalf("Delete = %v, want ResourcesRemainingError{15}", err)
	}
	ns := f.namespace(t)
	wantCondition(t, ns, v1.NamespaceContentRemaining, v1.ConditionTrue, "SomeResourcesRemain",
		"Some resources are remaining: configmaps. has 2 resource instances, widgets.example.com has 1 resource instances")
	wantCondition(t, ns, v1.NamespaceFinalizersRemaining, v1.ConditionTrue, "SomeFinalizersRemain",
		"Some content in the namespace has finalizers remaining: example.com/x in 3 resource instances, example.com/y in 1 resource instances")
	wantCondition(t, ns, v1.NamespaceDeletionContentFailure, v1.ConditionFalse, "ContentDeleted", "")
}

func TestDeleteContinuesPastDiscoveryFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	gerr := &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		{Group: "metrics.example.com", Version: "v1"}: errors.New("the server is currently unable to handle the request"),
	}}
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), gerr },
		map[string][]metav1.PartialObjectMetadata{"configmaps": {item("a")}, "widgets": {item("w")}})
	err := f.d.Delete(ctx, nsName)
	if err == nil || !strings.Contains(err.Error(), "unable to retrieve the complete list of server APIs") {
		t.Fatalf("Delete = %v, want the discovery error", err)
	}
	if !f.store.did("delete-collection/configmaps") || !f.store.did("delete/widgets") {
		t.Errorf("discovered resources not deleted: %v", f.store.actions)
	}
	if f.finalized() != nil {
		t.Error("finalized although discovery failed")
	}
	wantCondition(t, f.namespace(t), v1.NamespaceDeletionDiscoveryFailure, v1.ConditionTrue, "DiscoveryFailed",
		"Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.example.com/v1: the server is currently unable to handle the request")
}

func TestDeleteReportsGroupVersionParsingFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) {
		return append(standardResources(), resourceList("a/b/c", metav1.APIResource{Name: "bad", Verbs: allVerbs})), nil
	}, map[string][]metav1.PartialObjectMetadata{"configmaps": {item("a")}})
	if err := f.d.Delete(ctx, nsName); err == nil {
		t.Fatal("Delete succeeded despite an unparsable group version")
	}
	ns := f.namespace(t)
	wantCondition(t, ns, v1.NamespaceDeletionGVParsingFailure, v1.ConditionTrue, "GroupVersionParsingFailed", "unexpected GroupVersion string: a/b/c")
	wantCondition(t, ns, v1.NamespaceDeletionDiscoveryFailure, v1.ConditionFalse, "ResourcesDiscovered", "")
}

func TestDeleteReportsContentFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), nil },
		map[string][]metav1.PartialObjectMetadata{"configmaps": {item("a")}})
	f.d.metadata.(*metadatafake.FakeMetadataClient).PrependReactor("delete-collection", "configmaps",
		func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, errors.New("etcd is sad") })
	if err := f.d.Delete(ctx, nsName); err == nil {
		t.Fatal("Delete succeeded despite a failed deletecollection")
	}
	wantCondition(t, f.namespace(t), v1.NamespaceDeletionContentFailure, v1.ConditionTrue, "ContentDeletionFailed",
		"Failed to delete all resource types, 1 remaining: etcd is sad")
}

func TestDeleteIgnoresNamespacesNotBeingDeleted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, func() ([]*metav1.APIResourceList, error) { return standardResources(), nil }, nil)
	ns := f.namespace(t)
	ns.DeletionTimestamp = nil
	if _, err := f.kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kube.ClearActions()
	if err := f.d.Delete(ctx, nsName); err != nil {
		t.Fatal(err)
	}
	if len(f.kube.Actions()) != 1 || len(f.store.actions) != 0 {
		t.Errorf("unexpected actions %v %v", f.kube.Actions(), f.store.actions)
	}
	if err := f.d.Delete(ctx, "missing"); err != nil {
		t.Errorf("Delete of a missing namespace = %v", err)
	}
}
