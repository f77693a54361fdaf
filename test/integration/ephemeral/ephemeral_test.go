// Package ephemeral tests the ephemeral-volume-controller against a real
// kube-apiserver.
package ephemeral

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/ephemeral"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func setup(t *testing.T) framework.Namespace {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "eph-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs = 2
	c, err := ephemeral.New(ctx, cc, names.EphemeralVolume)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}
}

func createPod(n framework.Namespace, name string) *v1.Pod {
	n.T.Helper()
	p, err := n.Client.CoreV1().Pods(n.Name).Create(n.Ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}},
			Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
				VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"type": "scratch"}, Annotations: map[string]string{"team": "a"}},
					Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
						Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
				}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	return p
}

func waitClaimOwnedBy(n framework.Namespace, name string, pod *v1.Pod) *v1.PersistentVolumeClaim {
	n.T.Helper()
	var pvc *v1.PersistentVolumeClaim
	framework.Eventually(n.T, timeout, func() (bool, error) {
		var err error
		pvc, err = n.Client.CoreV1().PersistentVolumeClaims(n.Name).Get(n.Ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && metav1.IsControlledBy(pvc, pod), err
	})
	return pvc
}

func TestClaimCreated(t *testing.T) {
	n := setup(t)
	pod := createPod(n, "web")
	pvc := waitClaimOwnedBy(n, "web-scratch", pod)
	ref := pvc.OwnerReferences[0]
	if len(pvc.OwnerReferences) != 1 || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("ownerReferences %+v", pvc.OwnerReferences)
	}
	if pvc.Labels["type"] != "scratch" || pvc.Annotations["team"] != "a" {
		t.Errorf("labels %v annotations %v, want the template's", pvc.Labels, pvc.Annotations)
	}
	if q := pvc.Spec.Resources.Requests[v1.ResourceStorage]; q.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("request %v", q.String())
	}
}

// TestCollision: a claim of the same name that the pod does not own is left
// alone and reported; once it is deleted, the pod's own claim is created.
func TestCollision(t *testing.T) {
	n := setup(t)
	claims := n.Client.CoreV1().PersistentVolumeClaims(n.Name)
	if _, err := claims.Create(n.Ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "web-scratch", Labels: map[string]string{"owner": "someone"}},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := createPod(n, "web")
	events := n.WaitEvents("Pod", "web", "FailedBinding", 1, timeout)
	want := "ephemeral volume scratch: PVC " + n.Name + "/web-scratch was not created for pod " + n.Name + "/web (pod is not owner)"
	if events[0].Message != want || events[0].Type != v1.EventTypeWarning || events[0].Source.Component != "ephemeral_volume" {
		t.Errorf("event %s %q from %q, want Warning %q from ephemeral_volume", events[0].Type, events[0].Message, events[0].Source.Component, want)
	}
	got, err := claims.Get(n.Ctx, "web-scratch", metav1.GetOptions{})
	if err != nil || got.Labels["owner"] != "someone" || len(got.OwnerReferences) != 0 {
		t.Fatalf("colliding claim changed: %+v %v", got, err)
	}
	if _, err := claims.Patch(n.Ctx, "web-scratch", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := claims.Delete(n.Ctx, "web-scratch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaimOwnedBy(n, "web-scratch", pod)
}
