package storageversionmigrator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

var (
	now        = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}
	widgetsGVK = schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}
)

// resettable is a static RESTMapper that counts resets.
type resettable struct {
	meta.RESTMapper
	resets int
}

func (r *resettable) Reset() { r.resets++ }

type fixture struct {
	c        *Controller
	client   *fake.Clientset
	dynamic  *dynamicfake.FakeDynamicClient
	metadata *metadatafake.FakeMetadataClient
	mapper   *resettable
}

// objects are the widgets the metadata list returns, at list
// resourceVersion "100".
func newFixture(t *testing.T, objects []metav1.PartialObjectMetadata, svms ...*svmv1.StorageVersionMigration) *fixture {
	t.Helper()
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Storagemigration().V1().StorageVersionMigrations()
	for _, s := range svms {
		if err := inf.Informer().GetIndexer().Add(s); err != nil {
			t.Fatal(err)
		}
		if err := client.Tracker().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		crdResource: "CustomResourceDefinitionList", widgetsGVR: "WidgetList",
	})
	md := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	md.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
		for i := range objects {
			l.Items = append(l.Items, runtime.RawExtension{Object: &objects[i]})
		}
		return true, l, nil
	})
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disco.Resources = []*metav1.APIResourceList{{
		GroupVersion: widgetsGVR.GroupVersion().String(),
		APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: true, Kind: "Widget",
			Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}},
	}}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{widgetsGVR.GroupVersion()})
	m.Add(widgetsGVK, meta.RESTScopeNamespace)
	mapper := &resettable{RESTMapper: m}
	c, err := newController("storage-version-migrator-controller", client, dyn, md, disco, mapper,
		testingclock.NewFakeClock(now), map[schema.GroupResource]bool{{Resource: "events"}: true}, inf)
	if err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	return &fixture{c: c, client: client, dynamic: dyn, metadata: md, mapper: mapper}
}

func svm(name string, created time.Time, resource string, conds ...metav1.Condition) *svmv1.StorageVersionMigration {
	gr := schema.ParseGroupResource(resource)
	return &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Generation: 1},
		Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: gr.Group, Resource: gr.Resource}},
		Status:     svmv1.StorageVersionMigrationStatus{Conditions: conds},
	}
}

func cond(t svmv1.MigrationConditionType, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}
}

func (f *fixture) get(t *testing.T, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	s, err := f.client.StoragemigrationV1().StorageVersionMigrations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantCondition(t *testing.T, s *svmv1.StorageVersionMigration, typ svmv1.MigrationConditionType, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	c := meta.FindStatusCondition(s.Status.Conditions, string(typ))
	if c == nil {
		t.Fatalf("%s: no %s condition in %+v", s.Name, typ, s.Status.Conditions)
	}
	if c.Status != status || c.Reason != reason || c.Message != message {
		t.Errorf("%s: %s = %s/%s/%q, want %s/%s/%q", s.Name, typ, c.Status, c.Reason, c.Message, status, reason, message)
	}
}

func TestRunnerPromotesOldestPending(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, nil,
		svm("b-newer", now.Add(-time.Minute), "widgets.example.com"),
		svm("a-same-time", now.Add(-2*time.Minute), "widgets.example.com"),
		svm("z-oldest", now.Add(-2*time.Minute), "widgets.example.com"),
		svm("other", now.Add(-time.Hour), "gadgets.example.com"),
		svm("done", now.Add(-3*time.Hour), "widgets.example.com", cond(svmv1.MigrationSucceeded, metav1.ConditionTrue, reasonSucceeded)),
	)
	if err := f.c.syncRunner(ctx, "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	wantCondition(t, f.get(t, "a-same-time"), svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning, "The migration is running")
	for _, n := range []string{"b-newer", "z-oldest", "other", "done"} {
		if c := meta.FindStatusCondition(f.get(t, n).Status.Conditions, string(svmv1.MigrationRunning)); c != nil {
			t.Errorf("%s: unexpected Running condition %+v", n, c)
		}
	}
}

func TestRunnerWaitsForRunningMigration(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, nil,
		svm("running", now.Add(-time.Minute), "widgets.example.com", cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning)),
		svm("pending", now.Add(-2*time.Minute), "widgets.example.com"),
	)
	if err := f.c.syncRunner(ctx, "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	if a := f.client.Actions(); len(a) != 0 {
		t.Errorf("want no writes, got %v", a)
	}
}

func TestRunnerCompletesFinishedMigration(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t, nil,
		svm("finished", now.Add(-time.Minute), "widgets.example.com",
			cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning),
			cond(svmv1.MigrationSucceeded, metav1.ConditionTrue, reasonSucceeded)),
		svm("pending", now, "widgets.example.com"),
	)
	if err := f.c.syncRunner(ctx, "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	s := f.get(t, "finished")
	wantCondition(t, s, svmv1.MigrationRunning, metav1.ConditionFalse, reasonCompleted, "Migration completed")
	if c := meta.FindStatusCondition(s.Status.Conditions, string(svmv1.MigrationRunning)); c.ObservedGeneration != 1 || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("Running: observedGeneration %d, lastTransitionTime %v", c.ObservedGeneration, c.LastTransitionTime)
	}
	wantCondition(t, f.get(t, "pending"), svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning, "The migration is running")
}

func TestResourceVersion(t *testing.T) {
	running := cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning)
	tests := []struct {
		name    string
		svm     *svmv1.StorageVersionMigration
		wantErr bool
		wantRV  string
		// wantFailed is the Failed condition's message, if one is expected.
		wantFailed string
	}{
		{name: "running gets the list resourceVersion", svm: svm("m", now, "widgets.example.com", running), wantRV: "100"},
		{name: "pending is left alone", svm: svm("m", now, "widgets.example.com")},
		{name: "unknown resource, young: retried", svm: svm("m", now.Add(-30*time.Second), "nothings.example.com", running), wantErr: true},
		{name: "unknown resource, old: failed", svm: svm("m", now.Add(-2*time.Minute), "nothings.example.com", running),
			wantFailed: "resource does not exist in discovery"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, nil, tc.svm)
			err := f.c.syncResourceVersion(ctx, "m")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			s := f.get(t, "m")
			if s.Status.ResourceVersion != tc.wantRV {
				t.Errorf("status.resourceVersion = %q, want %q", s.Status.ResourceVersion, tc.wantRV)
			}
			if tc.wantFailed != "" {
				wantCondition(t, s, svmv1.MigrationFailed, metav1.ConditionTrue, reasonFailed, tc.wantFailed)
			}
			if tc.wantErr && f.mapper.resets != 1 {
				t.Errorf("RESTMapper resets = %d, want 1", f.mapper.resets)
			}
		})
	}
}

func widget(ns, name, rv string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func TestMigration(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m := svm("m", now, "widgets.example.com", cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning))
	m.Status.ResourceVersion = "10"
	f := newFixture(t, []metav1.PartialObjectMetadata{widget("a", "w1", "5"), widget("b", "w2", "10"), widget("a", "w3", "12")}, m)
	if err := f.c.syncMigration(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	// w3 is newer than the migration's start: not patched. The others are
	// not in the fake dynamic client: NotFound, counted as migrated.
	var patched []string
	for _, a := range f.dynamic.Actions() {
		p, ok := a.(clienttesting.PatchAction)
		if !ok {
			t.Errorf("unexpected action %v", a)
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"apiVersion": "example.com/v2", "kind": "Widget"}
		if body["apiVersion"] != want["apiVersion"] || body["kind"] != want["kind"] || p.GetPatchType() != "application/merge-patch+json" {
			t.Errorf("patch %s %s: %s", p.GetPatchType(), p.GetName(), p.GetPatch())
		}
		patched = append(patched, p.GetNamespace()+"/"+p.GetName()+"@"+body["metadata"].(map[string]any)["resourceVersion"].(string))
	}
	if got := strings.Join(patched, ","); got != "a/w1@5,b/w2@10" {
		t.Errorf("patched %s, want a/w1@5,b/w2@10", got)
	}
	s := f.get(t, "m")
	wantCondition(t, s, svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning, "The migration is running, 3 objects verified migrated")
	wantCondition(t, s, svmv1.MigrationSucceeded, metav1.ConditionTrue, reasonSucceeded, "Migration completed")
}

func TestMigrationWaits(t *testing.T) {
	running := cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning)
	withRV := func(s *svmv1.StorageVersionMigration) *svmv1.StorageVersionMigration {
		s.Status.ResourceVersion = "10"
		return s
	}
	tests := []struct {
		name    string
		svm     *svmv1.StorageVersionMigration
		wantErr bool
	}{
		{name: "no resourceVersion yet", svm: svm("m", now, "widgets.example.com", running)},
		{name: "already succeeded", svm: withRV(svm("m", now, "widgets.example.com", running, cond(svmv1.MigrationSucceeded, metav1.ConditionTrue, reasonSucceeded)))},
		{name: "resource the garbage collector ignores", svm: withRV(svm("m", now, "events", running)), wantErr: true},
		{name: "unknown resource, young", svm: withRV(svm("m", now, "nothings.example.com", running)), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, nil, tc.svm)
			// events resolve in this mapper, so that only the GC rule stops them.
			f.mapper.RESTMapper.(*meta.DefaultRESTMapper).Add(schema.GroupVersionKind{Version: "v1", Kind: "Event"}, meta.RESTScopeNamespace)
			err := f.c.syncMigration(ctx, "m")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if a := f.client.Actions(); len(a) != 0 {
				t.Errorf("want no status writes, got %v", a)
			}
			if a := f.dynamic.Actions(); len(a) != 0 {
				t.Errorf("want no patches, got %v", a)
			}
		})
	}
}

func TestMigrationUnknownResourceFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m := svm("m", now.Add(-2*time.Minute), "nothings.example.com", cond(svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning))
	m.Status.ResourceVersion = "10"
	f := newFixture(t, nil, m)
	if err := f.c.syncMigration(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	wantCondition(t, f.get(t, "m"), svmv1.MigrationFailed, metav1.ConditionTrue, reasonFailed,
		"migration encountered unhandled error: unable to obtain GVR from discovery")
}

func TestRunningMessage(t *testing.T) {
	for _, tc := range []struct {
		remaining, total int
		counted          bool
		want             string
	}{
		{0, 0, false, "The migration is running"},
		{0, 0, true, "The migration is running"},
		{2, 5, true, "The migration is running, 2/5 objects not yet migrated"},
		{0, 5, true, "The migration is running, 5 objects verified migrated"},
	} {
		if got := runningMessage(tc.remaining, tc.total, tc.counted, nil); got != tc.want {
			t.Errorf("runningMessage(%d, %d) = %q, want %q", tc.remaining, tc.total, got, tc.want)
		}
	}
}
