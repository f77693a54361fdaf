package storageutil

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestBoundVolume(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-uid"}}
	claimVol := &v1.Volume{Name: "a", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}
	ephVol := &v1.Volume{Name: "b", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}
	inline := &v1.Volume{Name: "c", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	owned := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "pod-uid", Controller: ptr.To(true)}
	claim := func(name, volume string, phase v1.PersistentVolumeClaimPhase, owners ...metav1.OwnerReference) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), OwnerReferences: owners},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: v1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	volume := func(name, claimName string) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{UID: types.UID("uid-" + claimName)}}}
	}
	for _, tc := range []struct {
		name    string
		vol     *v1.Volume
		pvcs    []*v1.PersistentVolumeClaim
		pvs     []*v1.PersistentVolume
		want    string // the volume's name
		wantErr string
	}{
		{name: "bound", vol: claimVol, pvcs: []*v1.PersistentVolumeClaim{claim("claim", "pv", v1.ClaimBound)}, pvs: []*v1.PersistentVolume{volume("pv", "claim")}, want: "pv"},
		{name: "no claim", vol: claimVol, wantErr: "failed to find PVC ns/claim"},
		{name: "pending", vol: claimVol, pvcs: []*v1.PersistentVolumeClaim{claim("claim", "pv", v1.ClaimPending)}, wantErr: "non-bound phase"},
		{name: "no volume", vol: claimVol, pvcs: []*v1.PersistentVolumeClaim{claim("claim", "pv", v1.ClaimBound)}, wantErr: `failed to find PV "pv"`},
		{name: "volume bound elsewhere", vol: claimVol, pvcs: []*v1.PersistentVolumeClaim{claim("claim", "pv", v1.ClaimBound)}, pvs: []*v1.PersistentVolume{volume("pv", "other")}, wantErr: "is not bound to claim"},
		{name: "ephemeral", vol: ephVol, pvcs: []*v1.PersistentVolumeClaim{claim("p-b", "pv", v1.ClaimBound, owned)}, pvs: []*v1.PersistentVolume{volume("pv", "p-b")}, want: "pv"},
		{name: "ephemeral not owned", vol: ephVol, pvcs: []*v1.PersistentVolumeClaim{claim("p-b", "pv", v1.ClaimBound)}, pvs: []*v1.PersistentVolume{volume("pv", "p-b")}, wantErr: "was not created for pod"},
		{name: "inline", vol: inline, wantErr: "does not refer to a claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
			for _, o := range tc.pvcs {
				if err := f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range tc.pvs {
				if err := f.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			pv, err := BoundVolume(pod, tc.vol, f.Core().V1().PersistentVolumeClaims().Lister(), f.Core().V1().PersistentVolumes().Lister())
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case pv.Name != tc.want:
				t.Errorf("volume %s, want %s", pv.Name, tc.want)
			}
		})
	}
}
