package deployment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var (
	t0      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	older   = metav1.NewTime(t0.Add(-2 * time.Hour))
	old     = metav1.NewTime(t0.Add(-time.Hour))
	newer   = metav1.NewTime(t0)
	webSel  = map[string]string{"app": "web"}
	intOrPc = intstr.Parse
)

type dOpt func(*apps.Deployment)

// deployment is a RollingUpdate Deployment "web" with maxSurge and
// maxUnavailable 0 (which resolves to maxUnavailable 1), as upstream's
// test helper builds it.
func deployment(replicas int32, opts ...dOpt) *apps.Deployment {
	d := &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid", Generation: 1},
		Spec: apps.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: webSel},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img:1"}}},
			},
			Strategy: apps.DeploymentStrategy{
				Type: apps.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &apps.RollingUpdateDeployment{
					MaxSurge:       ptr.To(intstr.FromInt32(0)),
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				},
			},
		},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

func surge(v string) dOpt {
	return func(d *apps.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intOrPc(v)) }
}
func unavailable(v string) dOpt {
	return func(d *apps.Deployment) { d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intOrPc(v)) }
}
func recreate(d *apps.Deployment) {
	d.Spec.Strategy = apps.DeploymentStrategy{Type: apps.RecreateDeploymentStrategyType}
}
func image(img string) dOpt {
	return func(d *apps.Deployment) { d.Spec.Template.Spec.Containers[0].Image = img }
}
func deadline(s int32) dOpt {
	return func(d *apps.Deployment) { d.Spec.ProgressDeadlineSeconds = ptr.To(s) }
}
func historyLimit(n int32) dOpt {
	return func(d *apps.Deployment) { d.Spec.RevisionHistoryLimit = ptr.To(n) }
}
func paused(d *apps.Deployment) { d.Spec.Paused = true }
func annotated(k, v string) dOpt {
	return func(d *apps.Deployment) { metav1.SetMetaDataAnnotation(&d.ObjectMeta, k, v) }
}
func withStatus(st apps.DeploymentStatus) dOpt {
	return func(d *apps.Deployment) { d.Status = st }
}

type rsOpt func(*apps.ReplicaSet)

// replicaSet is a ReplicaSet of d named name, with d's template at image
// img (its pod-template-hash label set to name's suffix).
func replicaSet(d *apps.Deployment, name, img string, replicas int32, created metav1.Time, opts ...rsOpt) *apps.ReplicaSet {
	hash := name[strings.LastIndex(name, "-")+1:]
	template := d.Spec.Template.DeepCopy()
	template.Spec.Containers[0].Image = img
	template.Labels[apps.DefaultDeploymentUniqueLabelKey] = hash
	rs := &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         d.Namespace,
			Name:              name,
			UID:               types.UID(name + "-uid"),
			CreationTimestamp: created,
			Labels:            template.Labels,
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(d, controllerKind)},
		},
		Spec: apps.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", apps.DefaultDeploymentUniqueLabelKey: hash}},
			Template: *template,
		},
	}
	for _, o := range opts {
		o(rs)
	}
	return rs
}

func rsAnnotated(k, v string) rsOpt {
	return func(rs *apps.ReplicaSet) { metav1.SetMetaDataAnnotation(&rs.ObjectMeta, k, v) }
}
func rev(n int) rsOpt { return rsAnnotated(RevisionAnnotation, fmt.Sprint(n)) }

// sized records the Deployment size rs was last sized for.
func sized(desired, max int32) rsOpt {
	return func(rs *apps.ReplicaSet) { setReplicasAnnotations(rs, desired, max) }
}

// running sets the status of a ReplicaSet whose pods all exist, ready of
// them ready and available.
func running(ready int32) rsOpt {
	return func(rs *apps.ReplicaSet) {
		rs.Status = apps.ReplicaSetStatus{Replicas: *rs.Spec.Replicas, ReadyReplicas: ready, AvailableReplicas: ready,
			ObservedGeneration: rs.Generation, TerminatingReplicas: ptr.To[int32](0)}
	}
}

func orphaned(rs *apps.ReplicaSet) { rs.OwnerReferences = nil }

// fixture runs one controller over a fake clientset and hand-filled caches.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
	c        *Controller
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	f := &fixture{t: t, ctx: ctx, client: client, factory: factory, clock: testingclock.NewFakeClock(t0), recorder: record.NewFakeRecorder(100)}
	c, err := NewController(ctx, Config{
		Name:                "deployment-controller",
		Client:              client,
		Deployments:         factory.Apps().V1().Deployments(),
		ReplicaSets:         factory.Apps().V1().ReplicaSets(),
		Pods:                factory.Core().V1().Pods(),
		Clock:               f.clock,
		TerminatingReplicas: true,
		Recorder:            f.recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *apps.Deployment:
			err = factory.Apps().V1().Deployments().Informer().GetIndexer().Add(o)
		case *apps.ReplicaSet:
			err = factory.Apps().V1().ReplicaSets().Informer().GetIndexer().Add(o)
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.queue.ShutDown)
	client.ClearActions()
	return f
}

// sync syncs ns/web and returns the write actions it made.
func (f *fixture) sync() ([]clienttesting.Action, error) {
	f.t.Helper()
	return f.syncKey("ns/web")
}

// syncKey syncs key and returns the write actions it made.
func (f *fixture) syncKey(key string) ([]clienttesting.Action, error) {
	f.t.Helper()
	err := f.c.sync(f.ctx, key)
	var writes []clienttesting.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes, err
}

// describe renders actions as "verb resource[/subresource] name".
func describe(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		switch a := a.(type) {
		// Also matches an UpdateAction: the two interfaces have the same methods.
		case clienttesting.CreateAction:
			s += " " + objectName(a.GetObject())
		case clienttesting.DeleteAction:
			s += " " + a.GetName()
		case clienttesting.PatchAction:
			s += " " + a.GetName()
		}
		out = append(out, s)
	}
	return out
}

func objectName(o runtime.Object) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return "?"
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

// written returns the object of the last create or update of resource
// (with subresource) named name.
func written[T runtime.Object](t *testing.T, actions []clienttesting.Action, resource, subresource, name string) T {
	t.Helper()
	var zero T
	for i := len(actions) - 1; i >= 0; i-- {
		a := actions[i]
		if a.GetResource().Resource != resource || a.GetSubresource() != subresource {
			continue
		}
		var obj runtime.Object
		switch a := a.(type) {
		// Also matches an UpdateAction: the two interfaces have the same methods.
		case clienttesting.CreateAction:
			obj = a.GetObject()
		default:
			continue
		}
		if objectName(obj) == name {
			return obj.(T)
		}
	}
	t.Fatalf("no write of %s/%s %s in %v", resource, subresource, name, describe(actions))
	return zero
}
