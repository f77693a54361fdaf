package pvprotection

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

func TestSync(t *testing.T) {
	tests := []struct {
		name          string
		finalizers    []string
		deleting      bool
		phase         v1.PersistentVolumePhase
		wantFinalizer bool
		wantUpdate    bool
	}{
		{name: "added", finalizers: []string{"other"}, phase: v1.VolumeAvailable, wantFinalizer: true, wantUpdate: true},
		{name: "present", finalizers: []string{storageutil.PVProtectionFinalizer}, phase: v1.VolumeBound, wantFinalizer: true},
		{name: "kept while Bound", finalizers: []string{storageutil.PVProtectionFinalizer}, deleting: true, phase: v1.VolumeBound, wantFinalizer: true},
		{name: "removed once Released", finalizers: []string{storageutil.PVProtectionFinalizer, "other"}, deleting: true, phase: v1.VolumeReleased, wantUpdate: true},
		{name: "removed when Available", finalizers: []string{storageutil.PVProtectionFinalizer}, deleting: true, phase: v1.VolumeAvailable, wantUpdate: true},
		{name: "deleted volume without it left alone", finalizers: []string{"other"}, deleting: true, phase: v1.VolumeAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Finalizers: tt.finalizers},
				Status: v1.PersistentVolumeStatus{Phase: tt.phase}}
			if tt.deleting {
				pv.DeletionTimestamp = &metav1.Time{}
			}
			client := fake.NewClientset(pv)
			f := informers.NewSharedInformerFactory(client, 0)
			_, ctx := ktesting.NewTestContext(t)
			c, err := NewController(ctx, "test", client, f.Core().V1().PersistentVolumes())
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(pv); err != nil {
				t.Fatal(err)
			}
			if err := c.sync(ctx, "pv"); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().PersistentVolumes().Get(context.Background(), "pv", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if has := slices.Contains(got.Finalizers, storageutil.PVProtectionFinalizer); has != tt.wantFinalizer {
				t.Errorf("finalizers %v, want protection %v", got.Finalizers, tt.wantFinalizer)
			}
			if tt.deleting && !slices.Contains(got.Finalizers, "other") && slices.Contains(tt.finalizers, "other") {
				t.Errorf("other finalizer lost: %v", got.Finalizers)
			}
			updates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" {
					updates++
				}
			}
			if (updates == 1) != tt.wantUpdate || updates > 1 {
				t.Errorf("%d updates, want update %v", updates, tt.wantUpdate)
			}
		})
	}
}

func TestMissingVolumeIgnored(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f.Core().V1().PersistentVolumes())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, "gone"); err != nil {
		t.Errorf("sync of a missing volume: %v", err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d API calls for a missing volume", n)
	}
}

func TestHandlerQueuesOnlyWhatNeedsWork(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	logger, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f.Core().V1().PersistentVolumes())
	if err != nil {
		t.Fatal(err)
	}
	c.pvChanged(logger, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "done", Finalizers: []string{storageutil.PVProtectionFinalizer}}})
	c.pvChanged(logger, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "new"}})
	c.pvChanged(logger, "not a volume")
	if n := c.queue.Len(); n != 1 {
		t.Errorf("%d keys queued, want 1", n)
	}
}
