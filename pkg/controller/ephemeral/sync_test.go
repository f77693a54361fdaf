package ephemeral

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

const ns = "ns"

func podWith(vols ...v1.Volume) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "pod-uid"}, Spec: v1.PodSpec{Volumes: vols}}
}

func ephemeralVolume(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}}}}
}

type fixture struct {
	c        *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, pod *v1.Pod, claims ...*v1.PersistentVolumeClaim) *fixture {
	t.Helper()
	objs := []runtime.Object{pod}
	for _, c := range claims {
		objs = append(objs, c)
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, Config{Name: "test", Client: client, PodInformer: f.Core().V1().Pods(),
		PVCInformer: f.Core().V1().PersistentVolumeClaims(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stopRecorder)
	rec := record.NewFakeRecorder(10)
	c.recorder = rec
	if err := c.podIndexer.Add(pod); err != nil {
		t.Fatal(err)
	}
	for _, cl := range claims {
		if err := f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(cl); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, recorder: rec}
}

func TestCreatesClaimFromTemplate(t *testing.T) {
	pod := podWith(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}, ephemeralVolume("data"))
	f := newFixture(t, pod)
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.sync(ctx, ns+"/web"); err != nil {
		t.Fatal(err)
	}
	pvc, err := f.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "web-data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "pod-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if len(pvc.OwnerReferences) != 1 || pvc.OwnerReferences[0].String() != want.String() {
		t.Errorf("ownerReferences %v, want %v", pvc.OwnerReferences, want)
	}
	if pvc.Labels["app"] != "web" || pvc.Annotations["note"] != "x" {
		t.Errorf("labels %v annotations %v, want the template's", pvc.Labels, pvc.Annotations)
	}
	if q := pvc.Spec.Resources.Requests[v1.ResourceStorage]; q.String() != "1Gi" || len(pvc.Spec.AccessModes) != 1 {
		t.Errorf("spec %+v, want the template's", pvc.Spec)
	}
	if len(f.recorder.Events) != 0 {
		t.Errorf("unexpected event %s", <-f.recorder.Events)
	}
}

func TestExistingOwnedClaimLeftAlone(t *testing.T) {
	pod := podWith(ephemeralVolume("data"))
	owned := claimFor(pod, &pod.Spec.Volumes[0], "web-data")
	owned.Namespace = ns
	f := newFixture(t, pod, owned)
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.sync(ctx, ns+"/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("%d API calls, want none", n)
	}
}

func TestCollidingClaim(t *testing.T) {
	pod := podWith(ephemeralVolume("data"))
	foreign := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-data", Namespace: ns, Labels: map[string]string{"mine": "yes"}}}
	f := newFixture(t, pod, foreign)
	_, ctx := ktesting.NewTestContext(t)
	err := f.c.sync(ctx, ns+"/web")
	if err == nil {
		t.Fatal("no error for a colliding claim")
	}
	got, gerr := f.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "web-data", metav1.GetOptions{})
	if gerr != nil || got.Labels["mine"] != "yes" || len(got.OwnerReferences) != 0 {
		t.Errorf("colliding claim changed: %+v %v", got, gerr)
	}
	select {
	case e := <-f.recorder.Events:
		want := "Warning FailedBinding ephemeral volume data: PVC ns/web-data was not created for pod ns/web (pod is not owner)"
		if e != want {
			t.Errorf("event %q, want %q", e, want)
		}
	default:
		t.Error("no event")
	}
}

func TestDeletedPodSkipped(t *testing.T) {
	pod := podWith(ephemeralVolume("data"))
	pod.DeletionTimestamp = &metav1.Time{}
	f := newFixture(t, pod)
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.sync(ctx, ns+"/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("%d API calls for a deleted pod", n)
	}
}

func TestCreateFailureEvent(t *testing.T) {
	pod := podWith(ephemeralVolume("data"))
	f := newFixture(t, pod)
	f.client.PrependReactor("create", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "web-data", errors.New("quota"))
	})
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.sync(ctx, ns+"/web"); err == nil {
		t.Fatal("no error for a failed create")
	}
	select {
	case e := <-f.recorder.Events:
		if !strings.HasPrefix(e, "Warning FailedBinding ephemeral volume data: create PVC web-data: ") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event")
	}
}

func TestEnqueue(t *testing.T) {
	pod := podWith(ephemeralVolume("data"))
	f := newFixture(t, pod)
	f.c.enqueuePod(podWith())
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("pod without ephemeral volumes queued")
	}
	logger, _ := ktesting.NewTestContext(t)
	f.c.pvcDeleted(logger, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-data", Namespace: ns}})
	if n := f.c.queue.Len(); n != 1 {
		t.Errorf("%d keys after the claim's deletion, want the pod", n)
	}
	if k, _ := f.c.queue.Get(); !strings.HasSuffix(k, "/web") {
		t.Errorf("queued %q", k)
	}
}
