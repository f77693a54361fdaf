package vacprotection

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

func vac(deleting bool, finalizers ...string) *storagev1.VolumeAttributesClass {
	v := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold", Finalizers: finalizers}, DriverName: "d"}
	if deleting {
		v.DeletionTimestamp = &metav1.Time{}
	}
	return v
}

func TestSync(t *testing.T) {
	fin := storageutil.VACProtectionFinalizer
	tests := []struct {
		name          string
		vac           *storagev1.VolumeAttributesClass
		pvs           []*v1.PersistentVolume
		pvcs          []*v1.PersistentVolumeClaim
		wantFinalizer bool
	}{
		{name: "added", vac: vac(false), wantFinalizer: true},
		{name: "removed when unused", vac: vac(true, fin)},
		{name: "kept for a volume's spec", vac: vac(true, fin), wantFinalizer: true,
			pvs: []*v1.PersistentVolume{{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: v1.PersistentVolumeSpec{VolumeAttributesClassName: ptr.To("gold")}}}},
		{name: "kept for a claim's spec", vac: vac(true, fin), wantFinalizer: true,
			pvcs: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Spec: v1.PersistentVolumeClaimSpec{VolumeAttributesClassName: ptr.To("gold")}}}},
		{name: "kept for a claim's current class", vac: vac(true, fin), wantFinalizer: true,
			pvcs: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Status: v1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: ptr.To("gold")}}}},
		{name: "kept for a claim's modify target", vac: vac(true, fin), wantFinalizer: true,
			pvcs: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
				Status: v1.PersistentVolumeClaimStatus{ModifyVolumeStatus: &v1.ModifyVolumeStatus{TargetVolumeAttributesClassName: "gold"}}}}},
		{name: "removed when others name other classes", vac: vac(true, fin),
			pvcs: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Spec: v1.PersistentVolumeClaimSpec{VolumeAttributesClassName: ptr.To("silver")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.vac)
			f := informers.NewSharedInformerFactory(client, 0)
			_, ctx := ktesting.NewTestContext(t)
			c, err := NewController(ctx, "test", client, f)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Storage().V1().VolumeAttributesClasses().Informer().GetIndexer().Add(tt.vac); err != nil {
				t.Fatal(err)
			}
			for _, pv := range tt.pvs {
				if err := c.pvIndexer.Add(pv); err != nil {
					t.Fatal(err)
				}
			}
			for _, pvc := range tt.pvcs {
				if err := c.pvcIndexer.Add(pvc); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.sync(ctx, "gold"); err != nil {
				t.Fatal(err)
			}
			got, err := client.StorageV1().VolumeAttributesClasses().Get(context.Background(), "gold", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if has := slices.Contains(got.Finalizers, storageutil.VACProtectionFinalizer); has != tt.wantFinalizer {
				t.Errorf("finalizers %v, want protection %v", got.Finalizers, tt.wantFinalizer)
			}
		})
	}
}

func TestReferrerEventsQueueDroppedClasses(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f)
	if err != nil {
		t.Fatal(err)
	}
	h := referrerHandler(c.queue, pvcClasses)
	old := &v1.PersistentVolumeClaim{Spec: v1.PersistentVolumeClaimSpec{VolumeAttributesClassName: ptr.To("new")},
		Status: v1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: ptr.To("old")}}
	cur := old.DeepCopy()
	cur.Status.CurrentVolumeAttributesClassName = ptr.To("new")
	h.OnUpdate(old, cur)
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("%d keys queued, want 1", n)
	}
	if k, _ := c.queue.Get(); k != "old" {
		t.Errorf("queued %q, want old", k)
	}
	c.queue.Done("old")
	pvh := referrerHandler(c.queue, pvClasses)
	pvh.OnDelete(&v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{VolumeAttributesClassName: ptr.To("gone")}})
	if n := c.queue.Len(); n != 1 {
		t.Errorf("%d keys queued after a volume's deletion, want 1", n)
	}
}
