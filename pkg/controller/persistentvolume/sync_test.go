package persistentvolume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2/ktesting"
)

func TestStaticBinding(t *testing.T) {
	f := newFixture(t, Config{}, newPVC("c1", "2Gi"), newPV("big", "10Gi"), newPV("fit", "3Gi"), newPV("small", "1Gi"))
	if err := f.syncClaim("c1"); err != nil {
		t.Fatal(err)
	}
	pv := f.pv("fit")
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "c1" || pv.Spec.ClaimRef.UID != "uid-c1" {
		t.Fatalf("claimRef %+v", pv.Spec.ClaimRef)
	}
	if pv.Annotations[storagehelpers.AnnBoundByController] != "yes" || pv.Status.Phase != v1.VolumeBound {
		t.Errorf("volume %v %s", pv.Annotations, pv.Status.Phase)
	}
	claim := f.pvc("c1")
	if claim.Spec.VolumeName != "fit" || claim.Annotations[storagehelpers.AnnBindCompleted] != "yes" || claim.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Errorf("claim %s %v", claim.Spec.VolumeName, claim.Annotations)
	}
	capacity := claim.Status.Capacity[v1.ResourceStorage]
	if claim.Status.Phase != v1.ClaimBound || capacity.String() != "3Gi" || len(claim.Status.AccessModes) != 1 {
		t.Errorf("claim status %+v", claim.Status)
	}
	for _, other := range []string{"big", "small"} {
		if f.pv(other).Spec.ClaimRef != nil {
			t.Errorf("%s bound too", other)
		}
	}
	// A second sync writes nothing.
	before := len(f.client.Actions())
	if err := f.syncClaim("c1"); err != nil {
		t.Fatal(err)
	}
	if err := f.syncVolume("fit"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()) - before; n != 0 {
		t.Errorf("%d writes after the binding, want none: %v", n, f.client.Actions()[before:])
	}
}

func TestPreBound(t *testing.T) {
	t.Run("volume pre-bound by name", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi"), newPV("small", "1Gi"), newPV("mine", "5Gi", withClaimRef("c1", "")))
		if err := f.syncVolume("mine"); err != nil {
			t.Fatal(err)
		}
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		pv := f.pv("mine")
		if pv.Spec.ClaimRef.UID != "uid-c1" || metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnBoundByController) {
			t.Errorf("pre-bound volume: %+v %v", pv.Spec.ClaimRef, pv.Annotations)
		}
		if claim := f.pvc("c1"); claim.Spec.VolumeName != "mine" || claim.Status.Phase != v1.ClaimBound {
			t.Errorf("claim %s %s", claim.Spec.VolumeName, claim.Status.Phase)
		}
	})
	t.Run("claim names its volume", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimVolume("v")), newPV("v", "1Gi"))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		pv := f.pv("v")
		if pv.Spec.ClaimRef == nil || pv.Annotations[storagehelpers.AnnBoundByController] != "yes" {
			t.Errorf("volume %+v %v", pv.Spec.ClaimRef, pv.Annotations)
		}
		claim := f.pvc("c1")
		if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) || claim.Status.Phase != v1.ClaimBound {
			t.Errorf("claim %v %s", claim.Annotations, claim.Status.Phase)
		}
	})
	t.Run("named volume too small", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "2Gi", claimVolume("v")), newPV("v", "1Gi"))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, `Warning VolumeMismatch Cannot bind to requested volume "v": requested PV is too small`) {
			t.Errorf("events %q", ev)
		}
		if f.pv("v").Spec.ClaimRef != nil {
			t.Error("volume bound")
		}
	})
	t.Run("named volume missing", func(t *testing.T) {
		claim := newPVC("c1", "1Gi", claimVolume("nope"))
		claim.Status.Phase = ""
		f := newFixture(t, Config{}, claim)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if got := f.pvc("c1").Status.Phase; got != v1.ClaimPending {
			t.Errorf("phase %s", got)
		}
	})
	t.Run("named volume bound to another claim by the user", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimVolume("v")), newPV("v", "1Gi", withClaimRef("other", "")))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, `Warning FailedBinding volume "v" already bound to a different claim.`) {
			t.Errorf("events %q", ev)
		}
		if f.pv("v").Spec.ClaimRef.Name != "other" {
			t.Error("volume taken")
		}
	})
	t.Run("volume mode mismatch on a pre-bound volume", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimBlock()), newPV("v", "1Gi", withClaimRef("c1", "uid-c1")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		ev := f.events()
		if !hasEvent(ev, "Warning VolumeMismatch Cannot bind PersistentVolume to requested PersistentVolumeClaim \"c1\" due to incompatible volumeMode.") ||
			!hasEvent(ev, "Warning VolumeMismatch Cannot bind PersistentVolume \"v\" to requested PersistentVolumeClaim due to incompatible volumeMode.") {
			t.Errorf("events %q", ev)
		}
	})
}

func TestVolumePhases(t *testing.T) {
	t.Run("unused volume becomes Available", func(t *testing.T) {
		f := newFixture(t, Config{}, newPV("v", "1Gi", withPhase(v1.VolumePending)))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		if got := f.pv("v").Status.Phase; got != v1.VolumeAvailable {
			t.Errorf("phase %s", got)
		}
	})
	t.Run("claimRef to a claim that never existed: Released, Retain keeps it", func(t *testing.T) {
		f := newFixture(t, Config{}, newPV("v", "1Gi", withPhase(v1.VolumeBound), withClaimRef("ghost", "uid-ghost")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		pv := f.pv("v")
		if pv.Status.Phase != v1.VolumeReleased || pv.Spec.ClaimRef == nil {
			t.Errorf("volume %s %+v", pv.Status.Phase, pv.Spec.ClaimRef)
		}
		// Nothing more happens on later syncs.
		before := len(f.client.Actions())
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		if n := len(f.client.Actions()) - before; n != 0 {
			t.Errorf("%d more actions", n)
		}
	})
	t.Run("claim recreated with another uid releases the volume", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi"), newPV("v", "1Gi", withPhase(v1.VolumeBound), withClaimRef("c1", "old-uid")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		if got := f.pv("v").Status.Phase; got != v1.VolumeReleased {
			t.Errorf("phase %s", got)
		}
	})
	t.Run("controller's binding to a claim bound elsewhere is rolled back", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimVolume("other")),
			newPV("v", "1Gi", withPhase(v1.VolumeBound), withClaimRef("c1", "uid-c1"), withAnnotation(storagehelpers.AnnBoundByController, "yes")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		pv := f.pv("v")
		if pv.Spec.ClaimRef != nil || pv.Annotations != nil || pv.Status.Phase != v1.VolumeAvailable {
			t.Errorf("volume %+v %v %s", pv.Spec.ClaimRef, pv.Annotations, pv.Status.Phase)
		}
	})
	t.Run("unknown reclaim policy fails the volume", func(t *testing.T) {
		f := newFixture(t, Config{}, newPV("v", "1Gi", withPhase(v1.VolumeReleased), withClaimRef("ghost", "u"), withPolicy("Bogus")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		if got := f.pv("v").Status.Phase; got != v1.VolumeFailed {
			t.Errorf("phase %s", got)
		}
		if ev := f.events(); !hasEvent(ev, "Warning VolumeUnknownReclaimPolicy Volume has unrecognized PersistentVolumeReclaimPolicy") {
			t.Errorf("events %q", ev)
		}
	})
}

func TestClaimLost(t *testing.T) {
	bound := func(opts ...pvcOpt) *v1.PersistentVolumeClaim {
		c := newPVC("c1", "1Gi", append([]pvcOpt{claimAnnotation(storagehelpers.AnnBindCompleted, "yes")}, opts...)...)
		c.Status.Phase = v1.ClaimBound
		return c
	}
	t.Run("volume gone", func(t *testing.T) {
		f := newFixture(t, Config{}, bound(claimVolume("gone")))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if got := f.pvc("c1").Status.Phase; got != v1.ClaimLost {
			t.Errorf("phase %s", got)
		}
		if ev := f.events(); !hasEvent(ev, "Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!") {
			t.Errorf("events %q", ev)
		}
	})
	t.Run("volume bound to another claim", func(t *testing.T) {
		f := newFixture(t, Config{}, bound(claimVolume("v")), newPV("v", "1Gi", withClaimRef("c2", "uid-c2")))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, "Warning ClaimMisbound Two claims are bound to the same volume, this one is bound incorrectly") {
			t.Errorf("events %q", ev)
		}
		if f.pv("v").Spec.ClaimRef.Name != "c2" {
			t.Error("volume rebound")
		}
	})
}

func TestUnmatchedClaims(t *testing.T) {
	t.Run("no class, nothing fits", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Ei"), newPV("v", "1Gi"))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, "Normal FailedBinding no persistent volumes available for this claim and no storage class is set") {
			t.Errorf("events %q", ev)
		}
		if f.pv("v").Spec.ClaimRef != nil {
			t.Error("bound")
		}
	})
	t.Run("default class assigned to a claim without class", func(t *testing.T) {
		old := newClass("old", "example.com/p", storagev1.VolumeBindingImmediate, "storageclass.kubernetes.io/is-default-class", "true")
		newer := newClass("newer", "example.com/p", storagev1.VolumeBindingImmediate, "storageclass.kubernetes.io/is-default-class", "true")
		newer.CreationTimestamp = metav1.NewTime(time.Now())
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimClass(nil)), old, newer)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if got := f.pvc("c1").Spec.StorageClassName; got == nil || *got != "newer" {
			t.Errorf("class %v", got)
		}
	})
	t.Run("class \"\" is not defaulted", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi"), newClass("d", "example.com/p", storagev1.VolumeBindingImmediate, "storageclass.kubernetes.io/is-default-class", "true"))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if got := f.pvc("c1").Spec.StorageClassName; *got != "" {
			t.Errorf("class %q", *got)
		}
	})
}

func TestProvisioning(t *testing.T) {
	gold := strPtr("gold")
	t.Run("external provisioner", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)), newClass("gold", "example.com/csi", storagev1.VolumeBindingImmediate))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		ev := f.waitEvent("Normal ExternalProvisioning")
		if !strings.Contains(ev, "external provisioner 'example.com/csi'") {
			t.Errorf("event %q", ev)
		}
		claim := f.pvc("c1")
		if claim.Annotations[storagehelpers.AnnStorageProvisioner] != "example.com/csi" || claim.Annotations[storagehelpers.AnnBetaStorageProvisioner] != "example.com/csi" {
			t.Errorf("annotations %v", claim.Annotations)
		}
	})
	t.Run("dynamic provisioning disabled", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimClass(gold)), newClass("gold", "example.com/csi", storagev1.VolumeBindingImmediate))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		if ann := f.pvc("c1").Annotations; ann != nil {
			t.Errorf("annotated %v", ann)
		}
	})
	t.Run("migrated in-tree provisioner", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)), newClass("gold", "kubernetes.io/aws-ebs", storagev1.VolumeBindingImmediate))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Normal ExternalProvisioning")
		ann := f.pvc("c1").Annotations
		// The claim names the CSI driver, so it is not marked migrated
		// (upstream's outcome).
		if ann[storagehelpers.AnnStorageProvisioner] != "ebs.csi.aws.com" || metav1.HasAnnotation(metav1.ObjectMeta{Annotations: ann}, storagehelpers.AnnMigratedTo) {
			t.Errorf("annotations %v", ann)
		}
	})
	t.Run("claim annotated for an in-tree provisioner gets migrated-to", func(t *testing.T) {
		f := newFixture(t, Config{}, newPVC("c1", "1Gi", claimClass(gold), claimAnnotation(storagehelpers.AnnBetaStorageProvisioner, "kubernetes.io/gce-pd")))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if got := f.pvc("c1").Annotations[storagehelpers.AnnMigratedTo]; got != "pd.csi.storage.gke.io" {
			t.Errorf("migrated-to %q", got)
		}
	})
	t.Run("unknown in-tree provisioner", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)), newClass("gold", "kubernetes.io/nope", storagev1.VolumeBindingImmediate))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, "Warning ProvisioningFailed no volume plugin matched name: kubernetes.io/nope") {
			t.Errorf("events %q", ev)
		}
	})
	t.Run("missing class", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, `Warning ProvisioningFailed storageclass.storage.k8s.io "gold" not found`) {
			t.Errorf("events %q", ev)
		}
	})
	t.Run("WaitForFirstConsumer", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)), newPV("v", "1Gi", withClass("gold")),
			newClass("gold", "example.com/csi", storagev1.VolumeBindingWaitForFirstConsumer))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, "Normal WaitForFirstConsumer waiting for first consumer to be created before binding") {
			t.Errorf("events %q", ev)
		}
		if f.pv("v").Spec.ClaimRef != nil {
			t.Error("bound without the scheduler")
		}
	})
	t.Run("WaitForFirstConsumer with unscheduled pods", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold)),
			newClass("gold", "example.com/csi", storagev1.VolumeBindingWaitForFirstConsumer), newPod("p2", "c1", ""), newPod("p1", "c1", ""), newPod("running", "c1", "n"))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		if ev := f.events(); !hasEvent(ev, "Normal WaitForPodScheduled waiting for pods p1,p2 to be scheduled") {
			t.Errorf("events %q", ev)
		}
	})
	t.Run("WaitForFirstConsumer with a selected node provisions", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(gold), claimAnnotation(storagehelpers.AnnSelectedNode, "n1")),
			newClass("gold", "example.com/csi", storagev1.VolumeBindingWaitForFirstConsumer))
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Normal ExternalProvisioning")
	})
}

func TestHostPath(t *testing.T) {
	hp := strPtr("hp")
	class := newClass("hp", hostPathPluginName, storagev1.VolumeBindingImmediate)
	t.Run("disabled", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true}, newPVC("c1", "1Gi", claimClass(hp)), class)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent(`Warning ProvisioningFailed Failed to create provisioner: provisioning in volume plugin "kubernetes.io/host-path" is disabled`)
	})
	t.Run("provision, then delete on release", func(t *testing.T) {
		dir := t.TempDir()
		if !hostPathDeletable.MatchString(dir) {
			t.Skipf("temporary directory %s is not under /tmp", dir)
		}
		f := newFixture(t, Config{EnableDynamicProvisioning: true, HostPath: HostPathConfig{ProvisioningEnabled: true, Dir: dir}},
			newPVC("c1", "2Gi", claimClass(hp)), class)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-c1 using kubernetes.io/host-path")
		pv := f.pv("pvc-uid-c1")
		if pv.Spec.HostPath == nil || filepath.Dir(pv.Spec.HostPath.Path) != dir {
			t.Fatalf("source %+v", pv.Spec.PersistentVolumeSource)
		}
		if _, err := os.Stat(pv.Spec.HostPath.Path); err != nil {
			t.Fatal(err)
		}
		if pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] != hostPathPluginName || pv.Annotations[annCreatedBy] != "hostpath-dynamic-provisioner" ||
			pv.Annotations[storagehelpers.AnnBoundByController] != "yes" || pv.Spec.StorageClassName != "hp" ||
			len(pv.Finalizers) != 1 || pv.Finalizers[0] != storagehelpers.PVDeletionInTreeProtectionFinalizer || pv.Spec.ClaimRef.UID != "uid-c1" {
			t.Errorf("volume %+v", pv)
		}
		if got := f.pvc("c1").Annotations[storagehelpers.AnnStorageProvisioner]; got != hostPathPluginName {
			t.Errorf("claim provisioner %q", got)
		}

		// The claim goes away: Released, the directory and the volume deleted.
		f.deleteClaim("c1")
		if err := f.syncVolume(pv.Name); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := f.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatal("volume not deleted")
		}
		if _, err := os.Stat(pv.Spec.HostPath.Path); !os.IsNotExist(err) {
			t.Errorf("directory left: %v", err)
		}
	})
	t.Run("block volumes are refused", func(t *testing.T) {
		f := newFixture(t, Config{EnableDynamicProvisioning: true, HostPath: HostPathConfig{ProvisioningEnabled: true, Dir: t.TempDir()}},
			newPVC("c1", "1Gi", claimClass(hp), claimBlock()), class)
		if err := f.syncClaim("c1"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent(`Warning ProvisioningFailed Failed to provision volume with StorageClass "hp": kubernetes.io/host-path does not support block volume provisioning`)
	})
}

func TestDeleteReclaim(t *testing.T) {
	released := func(opts ...pvOpt) *v1.PersistentVolume {
		return newPV("v", "1Gi", append([]pvOpt{withPhase(v1.VolumeBound), withClaimRef("gone", "uid-gone"), withPolicy(v1.PersistentVolumeReclaimDelete)}, opts...)...)
	}
	t.Run("external deleter", func(t *testing.T) {
		f := newFixture(t, Config{}, released(withAnnotation(storagehelpers.AnnDynamicallyProvisioned, "example.com/csi")))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		if got := f.pv("v").Status.Phase; got != v1.VolumeReleased {
			t.Errorf("phase %s", got)
		}
	})
	t.Run("nobody can delete an NFS volume", func(t *testing.T) {
		f := newFixture(t, Config{}, released(withSource(v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/x"}})))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent(`Warning VolumeFailedDelete error getting deleter volume plugin for volume "v": no deletable volume plugin matched`)
		if got := f.pv("v").Status.Phase; got != v1.VolumeFailed {
			t.Errorf("phase %s", got)
		}
	})
	t.Run("deleted once while finalizers hold the volume", func(t *testing.T) {
		dir := t.TempDir()
		if !hostPathDeletable.MatchString(dir) {
			t.Skipf("temporary directory %s is not under /tmp", dir)
		}
		f := newFixture(t, Config{}, released(withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}})))
		// A finalizer (pv-protection) holds the volume: the deletion only
		// sets its deletionTimestamp.
		deletes := 0
		f.client.PrependReactor("delete", "persistentvolumes", func(action clienttesting.Action) (bool, runtime.Object, error) {
			deletes++
			obj, err := f.client.Tracker().Get(action.GetResource(), "", action.(clienttesting.DeleteAction).GetName())
			if err != nil {
				return true, nil, err
			}
			pv := obj.(*v1.PersistentVolume).DeepCopy()
			now := metav1.Now()
			pv.DeletionTimestamp = &now
			return true, nil, f.client.Tracker().Update(action.GetResource(), pv, "")
		})
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		held := f.pv("v")
		if deletes != 1 || held.DeletionTimestamp == nil || held.Status.Phase != v1.VolumeReleased {
			t.Fatalf("%d deletes, volume %+v", deletes, held)
		}
		// Its update event syncs it again before the finalizer is gone.
		if err := f.c.syncVolume(f.ctx, held); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		if deletes != 1 {
			t.Errorf("%d deletes, want the first only", deletes)
		}
		// A sync re-added the controller's own finalizer while the
		// deletion ran: only another deletion removes it.
		held.Finalizers = append(held.Finalizers, storagehelpers.PVDeletionInTreeProtectionFinalizer)
		if err := f.c.syncVolume(f.ctx, held); err != nil {
			t.Fatal(err)
		}
		f.c.ops.wait()
		if deletes != 2 {
			t.Errorf("%d deletes, want a second one for the finalizer", deletes)
		}
	})
	t.Run("one read of the volume, again only after a conflict", func(t *testing.T) {
		for _, conflicts := range []int{0, 1} {
			dir := t.TempDir()
			if !hostPathDeletable.MatchString(dir) {
				t.Skipf("temporary directory %s is not under /tmp", dir)
			}
			pv := released(withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}}))
			pv.Finalizers = []string{storagehelpers.PVDeletionInTreeProtectionFinalizer}
			f := newFixture(t, Config{}, pv)
			gets, left := 0, conflicts
			f.client.PrependReactor("get", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
				gets++
				return false, nil, nil
			})
			f.client.PrependReactor("update", "persistentvolumes", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if left > 0 && action.GetSubresource() == "" {
					left--
					return true, nil, apierrors.NewConflict(v1.Resource("persistentvolumes"), "v", errors.New("stale"))
				}
				return false, nil, nil
			})
			if err := f.syncVolume("v"); err != nil {
				t.Fatal(err)
			}
			f.c.ops.wait()
			if _, err := f.client.CoreV1().PersistentVolumes().Get(f.ctx, "v", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%d conflicts: volume not deleted: %v", conflicts, err)
			}
			if want := 1 + conflicts + 1; gets != want { // the last one is this test's
				t.Errorf("%d conflicts: %d reads of the volume, want %d", conflicts, gets, want)
			}
		}
	})
	t.Run("hostPath outside /tmp", func(t *testing.T) {
		f := newFixture(t, Config{}, released(withSource(v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/data"}})))
		if err := f.syncVolume("v"); err != nil {
			t.Fatal(err)
		}
		f.waitEvent("Warning VolumeFailedDelete host_path deleter only supports /tmp/.+ but received provided /var/data")
	})
}

func TestOperationsBackOff(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	logger := klogFrom(ctx)
	o := newOperations()
	now := time.Unix(1000, 0)
	o.now = func() time.Time { return now }
	release := make(chan struct{})
	if !o.run(logger, "op", func() error { <-release; return errTest }) {
		t.Fatal("first run refused")
	}
	if o.run(logger, "op", func() error { return nil }) {
		t.Error("second run while the first runs")
	}
	close(release)
	o.wait()
	if o.run(logger, "op", func() error { return nil }) {
		t.Error("run during the back-off")
	}
	now = now.Add(opInitialBackoff)
	if !o.run(logger, "op", func() error { return errTest }) {
		t.Error("run after the back-off refused")
	}
	o.wait()
	now = now.Add(opInitialBackoff)
	if o.run(logger, "op", func() error { return nil }) {
		t.Error("back-off did not double")
	}
	now = now.Add(opInitialBackoff)
	if !o.run(logger, "op", func() error { return nil }) {
		t.Error("run after the doubled back-off refused")
	}
	o.wait()
	if len(o.running) != 0 {
		t.Errorf("success not forgotten: %v", o.running)
	}
}
