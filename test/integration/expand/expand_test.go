// Package expand tests the persistentvolume-expander-controller against a
// real kube-apiserver, whose PersistentVolumeClaimResize admission lets a
// bound claim grow when its StorageClass allows expansion. There is no
// binder: tests bind volumes and claims themselves.
package expand

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/expand"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

type env struct {
	framework.Namespace
	class string
}

func setup(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "exp-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "expandable-"},
		Provisioner: "hostpath.csi.k8s.io", AllowVolumeExpansion: ptr.To(true)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	c, err := expand.New(ctx, cc, names.PersistentVolumeExpander)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return &env{Namespace: framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}, class: sc.Name}
}

// boundPair creates a 1Gi claim and a volume with source src bound to each
// other, as the binder would leave them.
func (e *env) boundPair(name string, src v1.PersistentVolumeSource) {
	e.T.Helper()
	oneGi := v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	pvc, err := e.Client.CoreV1().PersistentVolumeClaims(e.Name).Create(e.Ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(e.class), VolumeName: e.Name + "-" + name,
			Resources: v1.VolumeResourceRequirements{Requests: oneGi}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	pv, err := e.Client.CoreV1().PersistentVolumes().Create(e.Ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: e.Name + "-" + name},
		Spec: v1.PersistentVolumeSpec{Capacity: oneGi, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: e.class, PersistentVolumeSource: src,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: e.Name, Name: name, UID: pvc.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	pv.Status.Phase = v1.VolumeBound
	if _, err := e.Client.CoreV1().PersistentVolumes().UpdateStatus(e.Ctx, pv, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	pvc.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, Capacity: oneGi, AccessModes: pvc.Spec.AccessModes}
	if _, err := e.Client.CoreV1().PersistentVolumeClaims(e.Name).UpdateStatus(e.Ctx, pvc, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

func (e *env) grow(name, size string) {
	e.T.Helper()
	patch := `{"spec":{"resources":{"requests":{"storage":"` + size + `"}}}}`
	if _, err := e.Client.CoreV1().PersistentVolumeClaims(e.Name).Patch(e.Ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

func TestCSIExpansionWaitsForExternalResizer(t *testing.T) {
	e := setup(t)
	e.boundPair("data", v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "hostpath.csi.k8s.io", VolumeHandle: "h1"}})
	e.grow("data", "2Gi")
	events := e.WaitEvents("PersistentVolumeClaim", "data", "ExternalExpanding", 1, timeout)
	if ev := events[0]; ev.Type != v1.EventTypeNormal || ev.Message != "waiting for an external controller to expand this PVC" || ev.Source.Component != "volume_expand" {
		t.Errorf("event %s %q from %q", ev.Type, ev.Message, ev.Source.Component)
	}
	pvc, err := e.Client.CoreV1().PersistentVolumeClaims(e.Name).Get(e.Ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pvc.Annotations["volume.kubernetes.io/storage-resizer"]; ok {
		t.Errorf("resizer annotation set on a CSI claim: %v", pvc.Annotations)
	}
}

func TestMigratedVolumeHandedToItsDriver(t *testing.T) {
	e := setup(t)
	e.boundPair("disk", v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}})
	e.grow("disk", "3Gi")
	framework.Eventually(t, timeout, func() (bool, error) {
		pvc, err := e.Client.CoreV1().PersistentVolumeClaims(e.Name).Get(e.Ctx, "disk", metav1.GetOptions{})
		return err == nil && pvc.Annotations["volume.kubernetes.io/storage-resizer"] == "pd.csi.storage.gke.io", err
	})
	events := e.WaitEvents("PersistentVolumeClaim", "disk", "ExternalExpanding", 1, timeout)
	want := "CSI migration enabled for kubernetes.io/gce-pd; waiting for external resizer to expand the pvc"
	if events[0].Message != want {
		t.Errorf("event %q, want %q", events[0].Message, want)
	}
}
