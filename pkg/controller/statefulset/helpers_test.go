package statefulset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type setOpt func(*apps.StatefulSet)

// newSet returns a StatefulSet named web as the API server stores it
// (defaulted), with one container of image.
func newSet(replicas int32, opts ...setOpt) *apps.StatefulSet {
	set := &apps.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "set-uid", Generation: 1},
		Spec: apps.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			ServiceName: "web-svc",
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx:1"}}},
			},
			PodManagementPolicy: apps.OrderedReadyPodManagement,
			UpdateStrategy: apps.StatefulSetUpdateStrategy{
				Type: apps.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &apps.RollingUpdateStatefulSetStrategy{
					Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
				},
			},
			RevisionHistoryLimit: ptr.To[int32](10),
			PersistentVolumeClaimRetentionPolicy: &apps.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: retain, WhenScaled: retain,
			},
		},
	}
	defaultTemplate(&set.Spec.Template)
	for _, o := range opts {
		o(set)
	}
	return set
}

func parallel(set *apps.StatefulSet) { set.Spec.PodManagementPolicy = apps.ParallelPodManagement }
func onDelete(set *apps.StatefulSet) {
	set.Spec.UpdateStrategy = apps.StatefulSetUpdateStrategy{Type: apps.OnDeleteStatefulSetStrategyType}
}
func withPartition(p int32) setOpt {
	return func(set *apps.StatefulSet) { set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(p) }
}
func withMaxUnavailable(v intstr.IntOrString) setOpt {
	return func(set *apps.StatefulSet) { set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &v }
}
func withStart(start int32) setOpt {
	return func(set *apps.StatefulSet) { set.Spec.Ordinals = &apps.StatefulSetOrdinals{Start: start} }
}
func withMinReady(s int32) setOpt {
	return func(set *apps.StatefulSet) { set.Spec.MinReadySeconds = s }
}
func withClaim(name string) setOpt {
	return func(set *apps.StatefulSet) {
		set.Spec.VolumeClaimTemplates = append(set.Spec.VolumeClaimTemplates, v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "data"}},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
	}
}
func withRetention(whenDeleted, whenScaled apps.PersistentVolumeClaimRetentionPolicyType) setOpt {
	return func(set *apps.StatefulSet) {
		set.Spec.PersistentVolumeClaimRetentionPolicy = &apps.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: whenDeleted, WhenScaled: whenScaled,
		}
	}
}

// fixture runs the controller against a fake clientset, whose objects it
// copies into the informer caches before every sync; it stands in for the
// kubelet by setting pod phases and readiness.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
	events   []string
}

func newFixture(t *testing.T, gates Features, objs ...runtime.Object) *fixture {
	t.Helper()
	return newFixtureSpaced(t, gates, 0, objs...)
}

// newFixtureSpaced is newFixture with status writes spaced by spacing.
func newFixtureSpaced(t *testing.T, gates Features, spacing time.Duration, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(t0)
	rec := record.NewFakeRecorder(1000)
	c, err := NewController(ctx, Config{
		Name: "statefulset-controller", Client: client,
		StatefulSets: factory.Apps().V1().StatefulSets(), Pods: factory.Core().V1().Pods(),
		Claims: factory.Core().V1().PersistentVolumeClaims(), Revisions: factory.Apps().V1().ControllerRevisions(),
		Clock: clk, Workers: 1, Features: gates, Recorder: rec, StatusSpacing: spacing,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	// What the API server adds on create: a UID, a creation time, and a
	// pod's Pending phase.
	created := 0
	client.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.CreateAction).GetObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		if m.GetUID() == "" {
			created++
			m.SetUID(types.UID(fmt.Sprintf("%s-uid-%d", m.GetName(), created)))
		}
		m.SetCreationTimestamp(metav1.NewTime(clk.Now()))
		if pod, ok := obj.(*v1.Pod); ok && pod.Status.Phase == "" {
			pod.Status.Phase = v1.PodPending
		}
		return false, nil, nil
	})
	return &fixture{t: t, ctx: ctx, c: c, client: client, factory: factory, clock: clk, recorder: rec}
}

// defaultGates are v1.37's defaults, without the consistency check (the
// fake clientset sets no resourceVersions).
var defaultGates = Features{MaxUnavailable: true, SemanticRevisions: true}

// refresh replaces the caches' contents with the clientset's objects.
func (f *fixture) refresh() {
	f.t.Helper()
	ctx := f.ctx
	replace := func(inf cache.SharedIndexInformer, list runtime.Object, err error) {
		if err != nil {
			f.t.Fatal(err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			f.t.Fatal(err)
		}
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o
		}
		if err := inf.GetIndexer().Replace(items, ""); err != nil {
			f.t.Fatal(err)
		}
	}
	sets, err := f.client.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	replace(f.factory.Apps().V1().StatefulSets().Informer(), sets, err)
	pods, err := f.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	replace(f.factory.Core().V1().Pods().Informer(), pods, err)
	claims, err := f.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	replace(f.factory.Core().V1().PersistentVolumeClaims().Informer(), claims, err)
	revs, err := f.client.AppsV1().ControllerRevisions("").List(ctx, metav1.ListOptions{})
	replace(f.factory.Apps().V1().ControllerRevisions().Informer(), revs, err)
}

// sync refreshes the caches and syncs ns/web once.
func (f *fixture) sync() error {
	f.t.Helper()
	f.refresh()
	f.client.ClearActions()
	err := f.c.sync(f.ctx, "ns/web")
	f.drainEvents()
	return err
}

// mustSync syncs and fails the test on an error.
func (f *fixture) mustSync() {
	f.t.Helper()
	if err := f.sync(); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

func (f *fixture) drainEvents() {
	for {
		select {
		case e := <-f.recorder.Events:
			f.events = append(f.events, e)
		default:
			return
		}
	}
}

// takeEvents returns the Events recorded since the last call.
func (f *fixture) takeEvents() []string {
	f.drainEvents()
	out := f.events
	f.events = nil
	return out
}

func (f *fixture) set() *apps.StatefulSet {
	f.t.Helper()
	set, err := f.client.AppsV1().StatefulSets("ns").Get(f.ctx, "web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return set
}

// updateSet applies mutate to the stored set and raises its generation, as
// a spec change through the API would.
func (f *fixture) updateSet(mutate func(*apps.StatefulSet)) {
	f.t.Helper()
	set := f.set()
	mutate(set)
	set.Generation++
	if _, err := f.client.AppsV1().StatefulSets("ns").Update(f.ctx, set, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) pods() []*v1.Pod {
	f.t.Helper()
	list, err := f.client.CoreV1().Pods("ns").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]*v1.Pod, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return ordinalOf(out[i]) < ordinalOf(out[j]) })
	return out
}

func (f *fixture) pod(name string) *v1.Pod {
	f.t.Helper()
	pod, err := f.client.CoreV1().Pods("ns").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return pod
}

// podNames lists the pods' names in ordinal order.
func (f *fixture) podNames() string {
	var names []string
	for _, p := range f.pods() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// podRevisions lists the pods' revision labels in ordinal order.
func (f *fixture) podRevisions() []string {
	var revs []string
	for _, p := range f.pods() {
		revs = append(revs, podRevision(p))
	}
	return revs
}

// setPod writes the pod's phase and readiness, as a kubelet would, ready
// since the fake clock's now.
func (f *fixture) setPod(name string, phase v1.PodPhase, ready bool) {
	f.t.Helper()
	pod := f.pod(name)
	pod.Status.Phase = phase
	pod.Status.Conditions = nil
	if ready {
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(f.clock.Now())}}
	}
	if _, err := f.client.CoreV1().Pods("ns").UpdateStatus(f.ctx, pod, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// runAll makes every Pending pod Running and Ready.
func (f *fixture) runAll() {
	f.t.Helper()
	for _, p := range f.pods() {
		if p.Status.Phase == v1.PodPending {
			f.setPod(p.Name, v1.PodRunning, true)
		}
	}
}

// converge syncs, running every new pod, until a sync changes nothing.
func (f *fixture) converge() {
	f.t.Helper()
	for i := 0; i < 50; i++ {
		f.mustSync()
		writes := slices.ContainsFunc(f.client.Actions(), func(a clienttesting.Action) bool {
			return a.GetVerb() != "get" && a.GetVerb() != "list"
		})
		f.runAll()
		if !writes {
			return
		}
	}
	f.t.Fatal("no convergence after 50 syncs")
}

func (f *fixture) revisions() []*apps.ControllerRevision {
	f.t.Helper()
	list, err := f.client.AppsV1().ControllerRevisions("ns").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]*apps.ControllerRevision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out
}

func (f *fixture) claims() []v1.PersistentVolumeClaim {
	f.t.Helper()
	list, err := f.client.CoreV1().PersistentVolumeClaims("ns").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// writes lists the sync's write actions as "verb resource[/subresource] name".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.client.Actions() {
		verb := a.GetVerb()
		if verb == "get" || verb == "list" || verb == "watch" {
			continue
		}
		res := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		name := ""
		switch a := a.(type) {
		// Also matches an UpdateAction: the two interfaces have the same methods.
		case clienttesting.CreateAction:
			if m, err := meta.Accessor(a.GetObject()); err == nil {
				name = m.GetName()
			}
		case clienttesting.DeleteAction:
			name = a.GetName()
		case clienttesting.PatchAction:
			name = a.GetName()
		}
		out = append(out, verb+" "+res+" "+name)
	}
	return out
}
