package storageutil

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestFinalizerRules(t *testing.T) {
	live := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"a"}}}
	if !NeedToAddFinalizer(live, PVProtectionFinalizer) || IsDeletionCandidate(live, PVProtectionFinalizer) {
		t.Error("live object without the finalizer")
	}
	deleted := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}, Finalizers: []string{PVProtectionFinalizer}}}
	if NeedToAddFinalizer(deleted, PVProtectionFinalizer) || !IsDeletionCandidate(deleted, PVProtectionFinalizer) {
		t.Error("deleted object with the finalizer")
	}
	if got := WithoutFinalizer([]string{"a", PVProtectionFinalizer, "b", PVProtectionFinalizer}, PVProtectionFinalizer); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("WithoutFinalizer: %v", got)
	}
	orig := make([]string, 1, 4)
	orig[0] = "a"
	got := WithFinalizer(orig, "b")
	_ = append(orig, "c")
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("WithFinalizer shares its input's backing array: %v", got)
	}
}

func TestPodPVCIndex(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
	if err := AddPodPVCIndex(inf); err != nil {
		t.Fatal(err)
	}
	if err := AddPodPVCIndex(inf); err != nil {
		t.Fatalf("second add: %v", err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "a", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
		{Name: "b", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}},
		{Name: "c", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}}}
	if err := inf.GetIndexer().Add(pod); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claim", "p-b"} {
		pods, err := PodsUsingClaim(inf.GetIndexer(), "ns", name)
		if err != nil || len(pods) != 1 {
			t.Errorf("pods using %s: %v %v", name, pods, err)
		}
	}
	if pods, _ := PodsUsingClaim(inf.GetIndexer(), "other", "claim"); len(pods) != 0 {
		t.Errorf("index ignores namespaces: %v", pods)
	}
}
