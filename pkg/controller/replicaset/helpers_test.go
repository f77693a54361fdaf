package replicaset

import (
	"fmt"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

var (
	t0       = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	selected = map[string]string{"app": "web"}
)

type rsOpt func(*apps.ReplicaSet)

func newRS(replicas int32, opts ...rsOpt) *apps.ReplicaSet {
	rs := &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid", Generation: 1, ResourceVersion: "10"},
		Spec: apps.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selected},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	for _, o := range opts {
		o(rs)
	}
	return rs
}

func withMinReady(s int32) rsOpt     { return func(rs *apps.ReplicaSet) { rs.Spec.MinReadySeconds = s } }
func rsDeleting(rs *apps.ReplicaSet) { rs.DeletionTimestamp = &metav1.Time{Time: t0} }
func withStatus(s apps.ReplicaSetStatus) rsOpt {
	return func(rs *apps.ReplicaSet) { rs.Status = s }
}

type podOpt func(*v1.Pod)

func newPod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1",
		Labels:            map[string]string{"app": "web", "tier": "front"},
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
	}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ownedBy(rs *apps.ReplicaSet) podOpt {
	return func(p *v1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, *metav1.NewControllerRef(rs, replicaSetKind))
	}
}
func ownedByOther(p *v1.Pod) {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid", Controller: ptr.To(true)})
}
func labelled(l map[string]string) podOpt { return func(p *v1.Pod) { p.Labels = l } }
func running(node string) podOpt {
	return func(p *v1.Pod) { p.Spec.NodeName = node; p.Status.Phase = v1.PodRunning }
}
func readyFor(d time.Duration) podOpt {
	return func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-d))}}
	}
}
func terminating(p *v1.Pod)       { p.DeletionTimestamp = &metav1.Time{Time: t0} }
func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func costly(c int) podOpt {
	return func(p *v1.Pod) {
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": fmt.Sprint(c)}
	}
}

// fixture is a controller whose caches and fake clientset hold the same
// objects, with a fake pod control and clock.
type fixture struct {
	c      *Controller
	client *fake.Clientset
	pods   *podcontrol.Fake
	clock  *testingclock.FakeClock
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	rsInformer := factory.Apps().V1().ReplicaSets()
	owners, err := newReplicaSetOwners(rsInformer, client)
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(t0)
	pc := &podcontrol.Fake{}
	c, err := NewController(ctx, Config{
		Name: "replicaset-controller", EventComponent: ClientName, QueueName: queueName,
		Kind: replicaSetKind, Resource: replicaSetResource,
		Client: client, Owners: owners, Pods: factory.Core().V1().Pods(), Clock: clk,
		Workers: 1, BurstReplicas: BurstReplicas, TerminatingReplicas: true, PodDeletionCost: true,
		PodControl: pc,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		switch o := o.(type) {
		case *apps.ReplicaSet:
			err = rsInformer.Informer().GetIndexer().Add(o)
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, pods: pc, clock: clk}
}

// statusUpdates returns the ReplicaSets written by UpdateStatus.
func (f *fixture) statusUpdates() []*apps.ReplicaSet {
	var out []*apps.ReplicaSet
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			out = append(out, u.GetObject().(*apps.ReplicaSet))
		}
	}
	return out
}

func (f *fixture) sync(t *testing.T) error {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return f.c.sync(ctx, "ns/web")
}
