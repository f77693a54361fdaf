// Package persistentvolume tests the persistentvolume-binder-controller
// against a real kube-apiserver. There is no scheduler, kubelet or external
// provisioner: tests play their parts (the selected-node annotation, a
// recycler pod's completion, a provisioned volume).
package persistentvolume

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/persistentvolume"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func TestMain(m *testing.M) { framework.Main(m) }

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
}

// setup creates a namespace and starts the controller through its real
// constructor with a 1s resync; hostPath enables the hostPath provisioner.
func setup(t *testing.T, hostPath bool) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, ctx: context.Background(), client: kubernetes.NewForConfigOrDie(cfg)}
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pv-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	cc := framework.NewControllerContext(t, cfg)
	o := &cc.Config.PersistentVolumeBinderController
	o.PVClaimBinderSyncPeriod = metav1.Duration{Duration: time.Second}
	o.EnableDynamicProvisioning = true
	o.EnableHostPathProvisioning = hostPath
	o.PersistentVolumeRecyclerConfiguration.MinimumTimeoutHostPath = 60
	o.PersistentVolumeRecyclerConfiguration.IncrementTimeoutHostPath = 30
	c, err := persistentvolume.New(context.Background(), cc, names.PersistentVolumeBinder)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	framework.StartController(t, cc, c)
	return e
}

// pvName makes volume names unique per test (volumes are cluster-scoped).
func (e *env) pvName(name string) string { return e.ns + "-" + name }

func (e *env) createPV(name, size string, mutate ...func(*v1.PersistentVolume)) *v1.PersistentVolume {
	e.t.Helper()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: e.pvName(name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              e.ns,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name}},
		},
	}
	for _, m := range mutate {
		m(pv)
	}
	created, err := e.client.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.client.CoreV1().PersistentVolumes().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	return created
}

// createPVC creates a claim of the test's own class (the namespace's
// name) unless mutate changes it.
func (e *env) createPVC(name, size string, mutate ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
	e.t.Helper()
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: ptr.To(e.ns),
		},
	}
	for _, m := range mutate {
		m(claim)
	}
	created, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Create(e.ctx, claim, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

func (e *env) createClass(name, provisioner string, mode storagev1.VolumeBindingMode, ann map[string]string) {
	e.t.Helper()
	_, err := e.client.StorageV1().StorageClasses().Create(e.ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name, Annotations: ann},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func (e *env) pv(name string) *v1.PersistentVolume {
	e.t.Helper()
	pv, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return pv
}

func (e *env) pvc(name string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	claim, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return claim
}

func (e *env) waitClaimPhase(name string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
	e.t.Helper()
	var claim *v1.PersistentVolumeClaim
	framework.Eventually(e.t, timeout, func() (bool, error) {
		claim = e.pvc(name)
		return claim.Status.Phase == phase, nil
	})
	return claim
}

func (e *env) waitVolumePhase(name string, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	e.t.Helper()
	var pv *v1.PersistentVolume
	framework.Eventually(e.t, timeout, func() (bool, error) {
		pv = e.pv(name)
		return pv.Status.Phase == phase, nil
	})
	return pv
}

// waitVolumeDeleted waits until the volume is deleted: gone, or held
// only by the kubernetes.io/pv-protection finalizer admission added (no
// pv-protection-controller runs here), which it then removes.
func (e *env) waitVolumeDeleted(name string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		pv, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil || pv.DeletionTimestamp == nil {
			return false, err
		}
		if len(pv.Finalizers) != 1 || pv.Finalizers[0] != "kubernetes.io/pv-protection" {
			return false, nil
		}
		_, err = e.client.CoreV1().PersistentVolumes().Patch(e.ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		return err == nil, err
	})
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// volumeEvents waits for Events of reason on a volume (recorded in
// default, where Events of cluster-scoped objects go).
func (e *env) volumeEvents(pv, reason string) []v1.Event {
	e.t.Helper()
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: metav1.NamespaceDefault}.WaitEvents("PersistentVolume", pv, reason, 1, timeout)
}

// deleteClaim deletes a claim and, playing the absent
// pvc-protection-controller, removes the finalizer admission added.
func (e *env) deleteClaim(name string) {
	e.t.Helper()
	if err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	_, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
}

func TestStaticBinding(t *testing.T) {
	e := setup(t, false)
	e.createPV("small", "1Gi")
	e.createPV("fit", "3Gi")
	e.createPV("big", "10Gi")
	e.createPV("rwx", "2Gi", func(pv *v1.PersistentVolume) {
		pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteMany}
	})
	e.createPVC("data", "2Gi")

	claim := e.waitClaimPhase("data", v1.ClaimBound)
	if claim.Spec.VolumeName != e.pvName("fit") {
		t.Errorf("bound to %s, want the smallest single-mode volume that fits", claim.Spec.VolumeName)
	}
	if claim.Annotations[storagehelpers.AnnBindCompleted] != "yes" || claim.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Errorf("claim annotations %v", claim.Annotations)
	}
	if got := claim.Status.Capacity[v1.ResourceStorage]; got.String() != "3Gi" {
		t.Errorf("claim capacity %s", got.String())
	}
	pv := e.waitVolumePhase(e.pvName("fit"), v1.VolumeBound)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID || pv.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Errorf("volume %+v %v", pv.Spec.ClaimRef, pv.Annotations)
	}
	if pv.Status.LastPhaseTransitionTime == nil {
		t.Error("no lastPhaseTransitionTime")
	}
	for _, other := range []string{"small", "big", "rwx"} {
		if pv := e.waitVolumePhase(e.pvName(other), v1.VolumeAvailable); pv.Spec.ClaimRef != nil {
			t.Errorf("%s bound too", other)
		}
	}

	// Retain: the claim goes, the volume is Released and stays so.
	e.deleteClaim("data")
	pv = e.waitVolumePhase(e.pvName("fit"), v1.VolumeReleased)
	if pv.Spec.ClaimRef == nil {
		t.Error("released volume lost its claimRef")
	}
}

func TestPreBound(t *testing.T) {
	e := setup(t, false)
	e.createPV("other", "1Gi")
	e.createPV("mine", "5Gi", func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: e.ns, Name: "a"}
	})
	e.createPV("named", "1Gi")
	e.createPV("tiny", "1Mi")
	e.createPVC("a", "1Gi")
	e.createPVC("b", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = e.pvName("named") })
	e.createPVC("c", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = e.pvName("tiny") })

	if got := e.waitClaimPhase("a", v1.ClaimBound).Spec.VolumeName; got != e.pvName("mine") {
		t.Errorf("a bound to %s", got)
	}
	if pv := e.pv(e.pvName("mine")); metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnBoundByController) {
		t.Error("a user's pre-binding marked bound-by-controller")
	}
	b := e.waitClaimPhase("b", v1.ClaimBound)
	if metav1.HasAnnotation(b.ObjectMeta, storagehelpers.AnnBoundByController) {
		t.Error("a claim naming its volume marked bound-by-controller")
	}
	events := e.namespace().WaitEvents("PersistentVolumeClaim", "c", "VolumeMismatch", 1, timeout)
	if want := fmt.Sprintf("Cannot bind to requested volume %q: requested PV is too small", e.pvName("tiny")); events[0].Message != want {
		t.Errorf("message %q, want %q", events[0].Message, want)
	}
	if e.pvc("c").Status.Phase != v1.ClaimPending {
		t.Error("c not Pending")
	}
}

// TestBadInput: a claim for 1 EiB, a volume whose claimRef names a claim
// that never existed, a class naming a provisioner that does not exist.
func TestBadInput(t *testing.T) {
	e := setup(t, false)
	e.createPV("v", "1Gi", func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = "" })
	ghost := e.createPV("ghost", "1Gi", func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: e.ns, Name: "never", UID: types.UID("4a5b6c7d-0000-0000-0000-000000000000")}
	})
	e.createPVC("huge", "1Ei", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("") })
	e.createClass(e.ns+"-nope", "kubernetes.io/does-not-exist", storagev1.VolumeBindingImmediate, nil)
	e.createPVC("nope", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To(e.ns + "-nope") })

	events := e.namespace().WaitEvents("PersistentVolumeClaim", "huge", "FailedBinding", 1, timeout)
	if events[0].Message != "no persistent volumes available for this claim and no storage class is set" {
		t.Errorf("message %q", events[0].Message)
	}
	events = e.namespace().WaitEvents("PersistentVolumeClaim", "nope", "ProvisioningFailed", 1, timeout)
	if events[0].Message != "no volume plugin matched name: kubernetes.io/does-not-exist" {
		t.Errorf("message %q", events[0].Message)
	}
	e.waitVolumePhase(ghost.Name, v1.VolumeReleased)
	// The resync keeps trying (1s here), but Events are aggregated and
	// nothing gets bound.
	time.Sleep(3 * time.Second)
	if e.pvc("huge").Status.Phase != v1.ClaimPending || e.pvc("nope").Status.Phase != v1.ClaimPending {
		t.Error("claims not Pending")
	}
	if e.pv(e.pvName("v")).Spec.ClaimRef != nil {
		t.Error("volume bound")
	}
}

// TestNoDoubleBinding: many claims race for fewer volumes; every volume
// ends bound to at most one claim, and every bound claim's volume points
// back at it.
func TestNoDoubleBinding(t *testing.T) {
	e := setup(t, false)
	const volumes, claims = 10, 25
	for i := range volumes {
		e.createPV(fmt.Sprintf("v%02d", i), "1Gi")
	}
	var wg sync.WaitGroup
	for i := range claims {
		wg.Go(func() {
			_, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Create(e.ctx, &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%02d", i)},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
					StorageClassName: ptr.To(e.ns),
				},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	framework.Eventually(t, timeout, func() (bool, error) {
		list, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound := 0
		for _, c := range list.Items {
			if c.Status.Phase == v1.ClaimBound {
				bound++
			}
		}
		return bound == volumes, nil
	})
	time.Sleep(2 * time.Second)
	owner := map[string]string{}
	list, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if c.Spec.VolumeName == "" {
			if c.Status.Phase != v1.ClaimPending {
				t.Errorf("%s: %s without a volume", c.Name, c.Status.Phase)
			}
			continue
		}
		if prev, dup := owner[c.Spec.VolumeName]; dup {
			t.Errorf("volume %s claimed by %s and %s", c.Spec.VolumeName, prev, c.Name)
		}
		owner[c.Spec.VolumeName] = c.Name
		if pv := e.pv(c.Spec.VolumeName); pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
			t.Errorf("volume %s does not point back at %s", pv.Name, c.Name)
		}
	}
	if len(owner) != volumes {
		t.Errorf("%d volumes bound, want %d", len(owner), volumes)
	}
}

func TestExternalProvisioning(t *testing.T) {
	e := setup(t, false)
	class := e.ns + "-csi"
	e.createClass(class, "example.com/csi", storagev1.VolumeBindingImmediate, nil)
	claim := e.createPVC("data", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class })
	events := e.namespace().WaitEvents("PersistentVolumeClaim", "data", "ExternalProvisioning", 1, timeout)
	if !strings.Contains(events[0].Message, "external provisioner 'example.com/csi'") {
		t.Errorf("message %q", events[0].Message)
	}
	ann := e.pvc("data").Annotations
	if ann[storagehelpers.AnnStorageProvisioner] != "example.com/csi" || ann[storagehelpers.AnnBetaStorageProvisioner] != "example.com/csi" {
		t.Errorf("annotations %v", ann)
	}

	// The provisioner creates the volume, bound to the claim.
	e.createPV("pvc", "1Gi", func(pv *v1.PersistentVolume) {
		pv.Annotations = map[string]string{storagehelpers.AnnDynamicallyProvisioned: "example.com/csi"}
		pv.Spec.StorageClassName = class
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: e.ns, Name: "data", UID: claim.UID}
	})
	if got := e.waitClaimPhase("data", v1.ClaimBound).Spec.VolumeName; got != e.pvName("pvc") {
		t.Errorf("bound to %s", got)
	}
	// Delete is the external deleter's: the volume is Released and left.
	e.deleteClaim("data")
	e.waitVolumePhase(e.pvName("pvc"), v1.VolumeReleased)
	framework.Consistently(t, 2*time.Second, "volume kept for its deleter", func() bool {
		_, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, e.pvName("pvc"), metav1.GetOptions{})
		return err == nil
	})
}

func TestWaitForFirstConsumer(t *testing.T) {
	e := setup(t, false)
	class := e.ns + "-wffc"
	e.createClass(class, "example.com/csi", storagev1.VolumeBindingWaitForFirstConsumer, nil)
	e.createPV("local", "1Gi", func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = class })
	e.createPVC("data", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class })
	e.namespace().WaitEvents("PersistentVolumeClaim", "data", "WaitForFirstConsumer", 1, timeout)

	_, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}},
			Volumes:    []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events := e.namespace().WaitEvents("PersistentVolumeClaim", "data", "WaitForPodScheduled", 1, timeout)
	if events[0].Message != "waiting for pod app to be scheduled" {
		t.Errorf("message %q", events[0].Message)
	}
	if e.pv(e.pvName("local")).Spec.ClaimRef != nil {
		t.Error("volume bound before scheduling")
	}
	// The scheduler chose a node and asks for provisioning.
	if _, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Patch(e.ctx, "data", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"node-1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.namespace().WaitEvents("PersistentVolumeClaim", "data", "ExternalProvisioning", 1, timeout)
	if got := e.pvc("data").Annotations[storagehelpers.AnnStorageProvisioner]; got != "example.com/csi" {
		t.Errorf("provisioner %q", got)
	}
}

func TestDefaultStorageClass(t *testing.T) {
	e := setup(t, false)
	// A claim without class, created before any default exists.
	e.createPVC("early", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = nil })
	framework.Consistently(t, 2*time.Second, "no class yet", func() bool { return e.pvc("early").Spec.StorageClassName == nil })
	class := e.ns + "-default"
	e.createClass(class, "example.com/csi", storagev1.VolumeBindingImmediate, map[string]string{"storageclass.kubernetes.io/is-default-class": "true"})
	framework.Eventually(t, timeout, func() (bool, error) {
		got := e.pvc("early").Spec.StorageClassName
		return got != nil && *got == class, nil
	})
	e.namespace().WaitEvents("PersistentVolumeClaim", "early", "ExternalProvisioning", 1, timeout)
}

func TestHostPathProvisioningAndDelete(t *testing.T) {
	e := setup(t, true)
	class := e.ns + "-hostpath"
	e.createClass(class, "kubernetes.io/host-path", storagev1.VolumeBindingImmediate, nil)
	claim := e.createPVC("data", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class })
	bound := e.waitClaimPhase("data", v1.ClaimBound)
	name := "pvc-" + string(claim.UID)
	if bound.Spec.VolumeName != name {
		t.Fatalf("bound to %q, want %q", bound.Spec.VolumeName, name)
	}
	pv := e.waitVolumePhase(name, v1.VolumeBound)
	t.Cleanup(func() {
		_ = e.client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if pv.Spec.HostPath == nil || !strings.HasPrefix(pv.Spec.HostPath.Path, "/tmp/hostpath_pv/") {
		t.Fatalf("source %+v", pv.Spec.PersistentVolumeSource)
	}
	if _, err := os.Stat(pv.Spec.HostPath.Path); err != nil {
		t.Errorf("directory: %v", err)
	}
	if pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] != "kubernetes.io/host-path" || pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete ||
		len(pv.Finalizers) == 0 {
		t.Errorf("volume %v %s %v", pv.Annotations, pv.Spec.PersistentVolumeReclaimPolicy, pv.Finalizers)
	}
	e.namespace().WaitEvents("PersistentVolumeClaim", "data", "ProvisioningSucceeded", 1, timeout)

	e.deleteClaim("data")
	e.waitVolumeDeleted(name)
	if _, err := os.Stat(pv.Spec.HostPath.Path); !os.IsNotExist(err) {
		t.Errorf("directory left behind: %v", err)
	}
}

func TestRecycle(t *testing.T) {
	e := setup(t, false)
	dir, err := os.MkdirTemp("/tmp", "recycle-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	pv := e.createPV("scrub", "2Gi", func(pv *v1.PersistentVolume) {
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRecycle
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}}
	})
	e.createPVC("data", "1Gi")
	e.waitClaimPhase("data", v1.ClaimBound)
	e.deleteClaim("data")

	// The recycler pod; the test plays the kubelet and lets it succeed.
	podName := "recycler-for-" + pv.Name
	var pod *v1.Pod
	framework.Eventually(t, timeout, func() (bool, error) {
		pod, err = e.client.CoreV1().Pods(metav1.NamespaceDefault).Get(e.ctx, podName, metav1.GetOptions{})
		return err == nil, nil
	})
	if pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds != 60 || pod.Spec.Volumes[0].HostPath == nil || pod.Spec.Volumes[0].HostPath.Path != dir {
		t.Errorf("recycler pod %+v", pod.Spec)
	}
	pod.Status.Phase = v1.PodSucceeded
	if _, err := e.client.CoreV1().Pods(metav1.NamespaceDefault).UpdateStatus(e.ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	recycled := e.waitVolumePhase(pv.Name, v1.VolumeAvailable)
	if recycled.Spec.ClaimRef != nil {
		t.Errorf("claimRef %+v", recycled.Spec.ClaimRef)
	}
	e.volumeEvents(pv.Name, "VolumeRecycled")
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := e.client.CoreV1().Pods(metav1.NamespaceDefault).Get(e.ctx, podName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
