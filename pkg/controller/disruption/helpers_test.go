package disruption

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	autoscaling "k8s.io/api/autoscaling/v1"
	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/scale"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const ns = "ns"

var (
	widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	widgetGR  = schema.GroupResource{Group: "example.com", Resource: "widgets"}
	t0        = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// fixture is a controller on a fake clientset whose informers are filled
// by hand (never started).
type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
	scales   *fakeScales
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	f := &fixture{t: t, ctx: ctx, client: client, factory: factory,
		clock: testingclock.NewFakeClock(t0), scales: &fakeScales{objs: map[string]*autoscaling.Scale{}}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(apps.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	mapper.Add(batch.SchemeGroupVersion.WithKind("Job"), meta.RESTScopeNamespace)
	mapper.Add(v1.SchemeGroupVersion.WithKind("ReplicationController"), meta.RESTScopeNamespace)
	mapper.Add(widgetGVK, meta.RESTScopeNamespace)
	client.Resources = []*metav1.APIResourceList{
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true},
			{Name: "widgets/scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Namespaced: true},
		}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "replicationcontrollers", Kind: "ReplicationController", Namespaced: true},
			{Name: "replicationcontrollers/scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Namespaced: true},
		}},
		{GroupVersion: "batch/v1", APIResources: []metav1.APIResource{{Name: "jobs", Kind: "Job", Namespaced: true}}},
	}
	c, err := NewController(ctx, Config{
		Name: "disruption-controller", Client: client, Informers: factory,
		Mapper: mapper, Scales: f.scales, Discovery: client.Discovery(), Clock: f.clock, Workers: 1,
		ObservedGeneration: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.c = c
	t.Cleanup(func() { c.queue.ShutDown(); c.staleQueue.ShutDown() })
	for _, o := range objs {
		f.add(o)
	}
	return f
}

// add puts obj into its informer's cache (and the fake API, for writes).
func (f *fixture) add(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Pod:
		err = f.factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
	case *policy.PodDisruptionBudget:
		err = f.factory.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer().Add(o)
	case *v1.ReplicationController:
		err = f.factory.Core().V1().ReplicationControllers().Informer().GetIndexer().Add(o)
	case *apps.ReplicaSet:
		err = f.factory.Apps().V1().ReplicaSets().Informer().GetIndexer().Add(o)
	case *apps.Deployment:
		err = f.factory.Apps().V1().Deployments().Informer().GetIndexer().Add(o)
	case *apps.StatefulSet:
		err = f.factory.Apps().V1().StatefulSets().Informer().GetIndexer().Add(o)
	default:
		f.t.Fatalf("cannot add %T", obj)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	// The fake API needs each object once, for the controller's writes.
	if err := f.client.Tracker().Add(obj); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
}

// sync syncs the budget and returns the status it wrote (nil: none).
func (f *fixture) sync(name string) (*policy.PodDisruptionBudgetStatus, error) {
	f.t.Helper()
	f.client.ClearActions()
	err := f.c.sync(f.ctx, ns+"/"+name)
	var out *policy.PodDisruptionBudgetStatus
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" && a.GetResource().Resource == "poddisruptionbudgets" {
			s := u.GetObject().(*policy.PodDisruptionBudget).Status
			out = &s
		}
	}
	return out, err
}

// mustSync syncs and requires a status write.
func (f *fixture) mustSync(name string) policy.PodDisruptionBudgetStatus {
	f.t.Helper()
	s, err := f.sync(name)
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	if s == nil {
		f.t.Fatal("sync wrote no status")
	}
	return *s
}

// events drains the recorded Events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (f *fixture) hasEvent(prefix string) bool {
	for _, e := range f.events() {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// fakeScales serves Scale objects by "group/resource/namespace/name".
type fakeScales struct {
	objs  map[string]*autoscaling.Scale
	calls int
}

func (s *fakeScales) set(gr schema.GroupResource, name string, uid types.UID, replicas int32) {
	s.objs[gr.String()+"/"+ns+"/"+name] = &autoscaling.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
		Spec:       autoscaling.ScaleSpec{Replicas: replicas},
	}
}

func (s *fakeScales) Scales(namespace string) scale.ScaleInterface {
	return scaleNS{s: s, ns: namespace}
}

type scaleNS struct {
	scale.ScaleInterface
	s  *fakeScales
	ns string
}

func (n scaleNS) Get(_ context.Context, gr schema.GroupResource, name string, _ metav1.GetOptions) (*autoscaling.Scale, error) {
	n.s.calls++
	if o, ok := n.s.objs[gr.String()+"/"+n.ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

// Builders.

func pdbMin(name string, v intstr.IntOrString) *policy.PodDisruptionBudget {
	return &policy.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1},
		Spec:       policy.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
}

func pdbMax(name string, v intstr.IntOrString) *policy.PodDisruptionBudget {
	p := pdbMin(name, v)
	p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, &v
	return p
}

func ownerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

// pod is a Ready pod labelled app=web, controlled by refs[0] if given.
func pod(name string, refs ...metav1.OwnerReference) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "web"}, OwnerReferences: refs},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue},
		}},
	}
}

func unready(p *v1.Pod) *v1.Pod {
	p.Status.Conditions[0].Status = v1.ConditionFalse
	return p
}

// pods returns n Ready pods name-0… controlled by ref.
func pods(prefix string, n int, ref metav1.OwnerReference) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("%s-%d", prefix, i), ref)
	}
	return out
}

func rs(name string, uid types.UID, replicas int32, refs ...metav1.OwnerReference) *apps.ReplicaSet {
	return &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid, OwnerReferences: refs},
		Spec:       apps.ReplicaSetSpec{Replicas: ptr.To(replicas)},
	}
}

func deployment(name string, uid types.UID, replicas int32) *apps.Deployment {
	return &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
		Spec:       apps.DeploymentSpec{Replicas: ptr.To(replicas)},
	}
}

func statefulSet(name string, uid types.UID, replicas int32) *apps.StatefulSet {
	return &apps.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
		Spec:       apps.StatefulSetSpec{Replicas: ptr.To(replicas)},
	}
}

func rc(name string, uid types.UID, replicas int32) *v1.ReplicationController {
	return &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
		Spec:       v1.ReplicationControllerSpec{Replicas: ptr.To(replicas)},
	}
}

var _ clock.WithTicker = (*testingclock.FakeClock)(nil)
