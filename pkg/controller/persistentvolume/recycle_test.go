package persistentvolume

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestRecyclerPod(t *testing.T) {
	r := recycler{config: RecyclerConfig{HostPathMinimumTimeout: 60, HostPathIncrement: 30, NFSMinimumTimeout: 300, NFSIncrement: 30}}
	tests := []struct {
		pv      *v1.PersistentVolume
		timeout int64
	}{
		{newPV("small", "1Gi", withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/a"}})), 60},
		{newPV("big", "10Gi", withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/b"}})), 300},
		{newPV("nfs", "20Gi", withSource(v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/e"}})), 600},
	}
	for _, tt := range tests {
		pod, err := r.recyclerPod(tt.pv)
		if err != nil {
			t.Fatal(err)
		}
		if pod.Name != "recycler-for-"+tt.pv.Name || pod.GenerateName != "" || pod.Namespace != "default" {
			t.Errorf("%s: pod %s/%s (%q)", tt.pv.Name, pod.Namespace, pod.Name, pod.GenerateName)
		}
		if *pod.Spec.ActiveDeadlineSeconds != tt.timeout {
			t.Errorf("%s: deadline %d, want %d", tt.pv.Name, *pod.Spec.ActiveDeadlineSeconds, tt.timeout)
		}
		src := pod.Spec.Volumes[0].VolumeSource
		if (tt.pv.Spec.HostPath != nil && (src.HostPath == nil || src.HostPath.Path != tt.pv.Spec.HostPath.Path)) ||
			(tt.pv.Spec.NFS != nil && (src.NFS == nil || src.NFS.Server != "s")) {
			t.Errorf("%s: volume %+v", tt.pv.Name, src)
		}
	}
	// The default template is not shared between pods.
	a, _ := r.recyclerPod(tests[0].pv)
	b, _ := r.recyclerPod(tests[1].pv)
	if a.Spec.Volumes[0].HostPath.Path == b.Spec.Volumes[0].HostPath.Path {
		t.Error("template shared")
	}
	if _, err := r.recyclerPod(newPV("csi", "1Gi")); err == nil {
		t.Error("CSI volume recyclable")
	}
}

func TestLoadRecyclerTemplate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: kube-system}\nspec:\n  volumes: [{name: vol}]\n  containers: [{name: c, image: busybox}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pod, err := loadRecyclerTemplate(good)
	if err != nil || pod.Namespace != "kube-system" || len(pod.Spec.Volumes) != 1 {
		t.Fatalf("pod %+v, err %v", pod, err)
	}
	novol := filepath.Join(dir, "novol.yaml")
	if err := os.WriteFile(novol, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: c, image: busybox}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRecyclerTemplate(novol); err == nil {
		t.Error("template without volumes accepted")
	}
	if _, err := loadRecyclerTemplate(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
	if pod, err := loadRecyclerTemplate(""); pod != nil || err != nil {
		t.Errorf("empty path: %v %v", pod, err)
	}
}

// A claim or volume the informer no longer has is forgotten and the other
// side queued.
func TestDeletedObjectsQueueTheOtherSide(t *testing.T) {
	claim := newPVC("c1", "1Gi", claimVolume("v"))
	pv := newPV("v", "1Gi", withClaimRef("c1", "uid-c1"))
	f := newFixture(t, Config{}, claim, pv)
	if err := f.factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Delete(claim); err != nil {
		t.Fatal(err)
	}
	if err := f.c.syncClaimKey(f.ctx, ns+"/c1"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := f.c.getClaim(ns + "/c1"); found {
		t.Error("claim not forgotten")
	}
	if f.c.volumeQueue.Len() != 1 {
		t.Errorf("volume queue %d", f.c.volumeQueue.Len())
	}
	if err := f.factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Delete(pv); err != nil {
		t.Fatal(err)
	}
	if err := f.c.syncVolumeKey(f.ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := f.c.volumes.get("v"); found {
		t.Error("volume not forgotten")
	}
	if f.c.claimQueue.Len() != 1 {
		t.Errorf("claim queue %d", f.c.claimQueue.Len())
	}
}

// The informer's older copy does not replace the controller's own write.
func TestOlderInformerObjectIgnored(t *testing.T) {
	f := newFixture(t, Config{}, newPV("v", "1Gi"))
	newer := newPV("v", "1Gi", withPhase(v1.VolumeBound))
	newer.ResourceVersion = "5"
	if _, err := f.c.storeVolume(newer); err != nil {
		t.Fatal(err)
	}
	before := len(f.client.Actions())
	if err := f.c.syncVolumeKey(f.ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()) - before; n != 0 {
		t.Errorf("%d actions on a stale informer object", n)
	}
	if got, _, _ := f.c.volumes.get("v"); got.ResourceVersion != "5" {
		t.Errorf("view replaced by resourceVersion %s", got.ResourceVersion)
	}
}
