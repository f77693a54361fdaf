package replication

import (
	"context"
	"reflect"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
)

var now = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func newRC() *v1.ReplicationController {
	return &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rc-uid", Generation: 2, ResourceVersion: "7", Labels: map[string]string{"l": "v"}},
		Spec: v1.ReplicationControllerSpec{
			Replicas:        ptr.To[int32](3),
			MinReadySeconds: 5,
			Selector:        map[string]string{"app": "web"},
			Template: &v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}},
			},
		},
		Status: v1.ReplicationControllerStatus{
			Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1,
			Conditions: []v1.ReplicationControllerCondition{{Type: v1.ReplicationControllerReplicaFailure, Status: v1.ConditionTrue,
				Reason: "FailedCreate", Message: "quota", LastTransitionTime: now}},
		},
	}
}

func TestConversionRoundTrip(t *testing.T) {
	rc := newRC()
	rs := toReplicaSet(rc)
	want := apps.ReplicaSetSpec{
		Replicas:        ptr.To[int32](3),
		MinReadySeconds: 5,
		Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template:        *rc.Spec.Template,
	}
	if !reflect.DeepEqual(rs.Spec, want) || !reflect.DeepEqual(rs.ObjectMeta, rc.ObjectMeta) {
		t.Errorf("spec = %+v", rs.Spec)
	}
	if c := rs.Status.Conditions; len(c) != 1 || c[0].Type != apps.ReplicaSetReplicaFailure || c[0].Message != "quota" {
		t.Errorf("conditions = %+v", c)
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set{"app": "web", "x": "y"}) || sel.Matches(labels.Set{"app": "db"}) {
		t.Errorf("selector %v, %v", sel, err)
	}
	rs.Status.TerminatingReplicas = ptr.To[int32](4) // not part of the RC API
	if back := toReplicationController(rs); !reflect.DeepEqual(back, rc) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, rc)
	}
	// A mutated spec pointer of the view must not reach the RC.
	*rs.Spec.Replicas = 9
	if *rc.Spec.Replicas != 3 {
		t.Error("the view shares spec.replicas with the RC")
	}
}

func TestOwners(t *testing.T) {
	ctx := context.Background()
	rc := newRC()
	other := newRC()
	other.Name, other.UID, other.Spec.Selector = "db", "db-uid", map[string]string{"app": "db"}
	client := fake.NewClientset(rc, other)
	factory := informers.NewSharedInformerFactory(client, 0)
	o := newOwners(factory.Core().V1().ReplicationControllers(), client)
	for _, obj := range []*v1.ReplicationController{rc, other} {
		if err := o.Informer().GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := o.Get("ns", "web")
	if err != nil || rs.UID != "rc-uid" {
		t.Fatalf("Get = %v, %v", rs, err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "web"}}}
	if got := o.ForPod(pod); len(got) != 1 || got[0].Name != "web" {
		t.Errorf("ForPod = %v", got)
	}
	if got := o.ForPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}); got != nil {
		t.Errorf("ForPod of an unlabelled pod = %v", got)
	}
	if got := o.ControlledBy("anything"); got != nil {
		t.Errorf("ControlledBy = %v", got)
	}
	fresh, err := o.GetFresh(ctx, "ns", "web")
	if err != nil || fresh.Spec.MinReadySeconds != 5 {
		t.Fatalf("GetFresh = %v, %v", fresh, err)
	}
	fresh.Status = apps.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 2, TerminatingReplicas: ptr.To[int32](1)}
	updated, err := o.UpdateStatus(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := client.CoreV1().ReplicationControllers("ns").Get(ctx, "web", metav1.GetOptions{})
	wantStatus := v1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 2}
	if !reflect.DeepEqual(stored.Status, wantStatus) || updated.Status.ReadyReplicas != 3 {
		t.Errorf("stored status = %+v", stored.Status)
	}
}

// TestControllerServesReplicationControllers runs the shared controller on
// an RC: pods are created with an RC controllerRef and the status is
// written to the RC.
func TestControllerServesReplicationControllers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc := newRC()
	rc.Status = v1.ReplicationControllerStatus{}
	client := fake.NewClientset(rc)
	factory := informers.NewSharedInformerFactory(client, 0)
	pc := &podcontrol.Fake{}
	c, err := replicaset.NewController(ctx, replicaset.Config{
		Name: "replicationcontroller-controller", EventComponent: ClientName, QueueName: queueName,
		Kind: v1.SchemeGroupVersion.WithKind("ReplicationController"), Resource: v1.SchemeGroupVersion.WithResource("replicationcontrollers").GroupResource(),
		Client: client, Owners: newOwners(factory.Core().V1().ReplicationControllers(), client), Pods: factory.Core().V1().Pods(),
		Workers: 1, BurstReplicas: BurstReplicas, PodControl: pc,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	factory.Start(ctx.Done())
	// The informers stop with ctx: cancel before waiting for them, also
	// when a check fails.
	defer func() { cancel(); factory.Shutdown() }()

	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return pc.CreateCalls() == 3, nil
	})
	if err != nil {
		t.Fatalf("%d creates: %v", pc.CreateCalls(), err)
	}
	// The fake pod control stores nothing: the pods appear as the API
	// server would have stored them, and observing them lets the status
	// (replicas and observedGeneration together) be written.
	for i, name := range []string{"web-a", "web-b", "web-c"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
			Labels: map[string]string{"app": "web"}, OwnerReferences: []metav1.OwnerReference{pc.ControllerRefs[i]}}}
		if _, err := client.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().ReplicationControllers("ns").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.ObservedGeneration == 2 && got.Status.Replicas == 3, err
	})
	if err != nil {
		t.Fatalf("RC not synced: %v (%d creates)", err, pc.CreateCalls())
	}
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: "web", UID: "rc-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if got := pc.ControllerRefs[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("controllerRef = %+v", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}
