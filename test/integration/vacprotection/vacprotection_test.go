// Package vacprotection tests the
// volumeattributesclass-protection-controller against a real
// kube-apiserver.
package vacprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/vacprotection"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout   = 30 * time.Second
	finalizer = "kubernetes.io/vac-protection"
)

func TestClassProtection(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	cc := framework.NewControllerContext(t, cfg)
	c, err := vacprotection.New(ctx, cc, names.VolumeAttributesClassProtection)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)

	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vacp-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vacs := client.StorageV1().VolumeAttributesClasses()
	vac, err := vacs.Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "gold-"},
		DriverName: "hostpath.csi.k8s.io", Parameters: map[string]string{"iops": "100"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func() (*storagev1.VolumeAttributesClass, error) { return vacs.Get(ctx, vac.Name, metav1.GetOptions{}) }
	// A class that lost the finalizer (or never had it) gets it.
	if _, err := vacs.Patch(ctx, vac.Name, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		v, err := get()
		return err == nil && slices.Contains(v.Finalizers, finalizer), err
	})

	claims := client.CoreV1().PersistentVolumeClaims(ns.Name)
	if _, err := claims.Create(ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			VolumeAttributesClassName: ptr.To(vac.Name),
			Resources:                 v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := vacs.Delete(ctx, vac.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 3*time.Second, "class kept while a claim names it", func() bool {
		v, err := get()
		return err == nil && v.DeletionTimestamp != nil
	})
	// No pvc-protection controller runs here: drop the claim's finalizer
	// so that its deletion completes.
	if _, err := claims.Patch(ctx, "data", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := claims.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := get()
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
