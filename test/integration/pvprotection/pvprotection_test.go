// Package pvprotection tests the persistentvolume-protection-controller
// against a real kube-apiserver. There is no binder: tests set the
// volumes' phases themselves.
package pvprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/pvprotection"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout   = 30 * time.Second
	finalizer = "kubernetes.io/pv-protection"
)

func TestVolumeProtection(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	cc := framework.NewControllerContext(t, cfg)
	c, err := pvprotection.New(ctx, cc, names.PersistentVolumeProtection)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)

	pvs := client.CoreV1().PersistentVolumes()
	pv, err := pvs.Create(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pvp-"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/pv"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := pv.Name
	get := func() (*v1.PersistentVolume, error) { return pvs.Get(ctx, name, metav1.GetOptions{}) }

	// A volume that lost the finalizer gets it back.
	if _, err := pvs.Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		pv, err := get()
		return err == nil && slices.Contains(pv.Finalizers, finalizer), err
	})

	setPhase := func(phase v1.PersistentVolumePhase) {
		t.Helper()
		pv, err := get()
		if err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = phase
		if _, err := pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase(v1.VolumeBound)
	if err := pvs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 3*time.Second, "Bound volume kept", func() bool {
		pv, err := get()
		return err == nil && pv.DeletionTimestamp != nil
	})
	setPhase(v1.VolumeReleased)
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := get()
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
