// Package attachdetach tests the persistentvolume-attach-detach-controller
// against a real kube-apiserver. There is no kubelet, scheduler or external
// attacher: tests bind pods, set claims Bound and set VolumeAttachments'
// status.attached themselves.
package attachdetach

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/attachdetach"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout = 30 * time.Second
	driver  = "csi.example.com"
)

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     framework.Namespace
}

func setup(t *testing.T, opts attachdetach.Options) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ad-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	c, err := attachdetach.NewWithOptions(ctx, cc, names.PersistentVolumeAttachDetach, opts)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return &env{t: t, ctx: ctx, client: client, ns: framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}}
}

// n is the cluster-wide name of the test's node or volume name: the tests
// share one apiserver.
func (e *env) n(name string) string { return e.ns.Name + "-" + name }

func (e *env) node(name string, managed bool) {
	e.t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.n(name)}}
	if managed {
		n.Annotations = map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
	}
	n, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// volume creates a CSI PersistentVolume and a claim bound to it.
func (e *env) volume(name, handle string) {
	e.t.Helper()
	pvc, err := e.client.CoreV1().PersistentVolumeClaims(e.ns.Name).Create(e.ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			VolumeName: e.n(name), Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.client.CoreV1().PersistentVolumes().Create(e.ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: e.n(name)},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			ClaimRef:               &v1.ObjectReference{Namespace: e.ns.Name, Name: name, UID: pvc.UID},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	pvc.Status.Phase = v1.ClaimBound
	if _, err := e.client.CoreV1().PersistentVolumeClaims(e.ns.Name).UpdateStatus(e.ctx, pvc, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(name, claim, node string) {
	e.t.Helper()
	_, err := e.client.CoreV1().Pods(e.ns.Name).Create(e.ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{NodeName: e.n(node), Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deletePod(name string) {
	e.t.Helper()
	if err := e.client.CoreV1().Pods(e.ns.Name).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) vaName(handle, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(handle+driver+e.n(node))))
}

func (e *env) waitAttachment(name string) *storagev1.VolumeAttachment {
	e.t.Helper()
	var va *storagev1.VolumeAttachment
	framework.Eventually(e.t, timeout, func() (bool, error) {
		var err error
		va, err = e.client.StorageV1().VolumeAttachments().Get(e.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return va
}

func (e *env) waitNoAttachment(name string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		_, err := e.client.StorageV1().VolumeAttachments().Get(e.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// setAttached plays the external attacher.
func (e *env) setAttached(va *storagev1.VolumeAttachment) {
	e.t.Helper()
	va.Status.Attached = true
	if _, err := e.client.StorageV1().VolumeAttachments().UpdateStatus(e.ctx, va, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitVolumesAttached(node string, want ...v1.UniqueVolumeName) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, e.n(node), metav1.GetOptions{})
		if err != nil || len(n.Status.VolumesAttached) != len(want) {
			return false, err
		}
		for i, av := range n.Status.VolumesAttached {
			if av.Name != want[i] {
				return false, nil
			}
		}
		return true, nil
	})
}

// A pod's CSI volume is attached to its node, reported in the node's status
// with an Event on the pod, kept while the kubelet reports it in use and
// detached once the pod is gone and the volume unmounted.
func TestAttachDetachLifecycle(t *testing.T) {
	e := setup(t, attachdetach.Options{SyncPeriod: time.Minute})
	e.node("node-a", true)
	e.volume("data", "vol-1")
	e.pod("web", "data", "node-a")

	va := e.waitAttachment(e.vaName("vol-1", "node-a"))
	if va.Spec.NodeName != e.n("node-a") || va.Spec.Attacher != driver || ptr.Deref(va.Spec.Source.PersistentVolumeName, "") != e.n("data") {
		t.Fatalf("VolumeAttachment spec: %+v", va.Spec)
	}
	e.setAttached(va)
	unique := v1.UniqueVolumeName("kubernetes.io/csi/" + driver + "^vol-1")
	e.waitVolumesAttached("node-a", unique)
	ev := e.ns.WaitEvents("Pod", "web", "SuccessfulAttachVolume", 1, timeout)
	if want := fmt.Sprintf("AttachVolume.Attach succeeded for volume %q ", e.n("data")); ev[0].Message != want || ev[0].Source.Component != "attachdetach-controller" {
		t.Fatalf("event %q from %q", ev[0].Message, ev[0].Source.Component)
	}

	// The kubelet reports the volume mounted; the pod goes.
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, e.n("node-a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.VolumesInUse = []v1.UniqueVolumeName{unique}
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.deletePod("web")
	framework.Consistently(t, 3*time.Second, "the mounted volume stays attached", func() bool {
		_, err := e.client.StorageV1().VolumeAttachments().Get(e.ctx, va.Name, metav1.GetOptions{})
		return err == nil
	})
	n, err = e.client.CoreV1().Nodes().Get(e.ctx, e.n("node-a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.VolumesInUse = nil
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitNoAttachment(va.Name)
	e.waitVolumesAttached("node-a")
}

// Nodes without the controller-managed annotation are left to their kubelet.
func TestUnmanagedNode(t *testing.T) {
	e := setup(t, attachdetach.Options{})
	e.node("node-a", false)
	e.node("node-b", true)
	e.volume("a", "vol-a")
	e.volume("b", "vol-b")
	e.pod("on-a", "a", "node-a")
	e.pod("on-b", "b", "node-b")
	e.waitAttachment(e.vaName("vol-b", "node-b"))
	if _, err := e.client.StorageV1().VolumeAttachments().Get(e.ctx, e.vaName("vol-a", "node-a"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("VolumeAttachment for the unmanaged node: %v", err)
	}
}

// A ReadWriteOnce volume moves between nodes: the second pod waits (one
// Event) until the first pod's node detached it.
func TestExclusiveVolumeMoves(t *testing.T) {
	e := setup(t, attachdetach.Options{})
	e.node("node-a", true)
	e.node("node-b", true)
	e.volume("data", "vol-1")
	e.pod("first", "data", "node-a")
	e.setAttached(e.waitAttachment(e.vaName("vol-1", "node-a")))
	e.waitVolumesAttached("node-a", v1.UniqueVolumeName("kubernetes.io/csi/"+driver+"^vol-1"))

	e.pod("second", "data", "node-b")
	ev := e.ns.WaitEvents("Pod", "second", "FailedAttachVolume", 1, timeout)
	if want := fmt.Sprintf("Waiting for detach for volume %q Volume is already used by pod(s) first", e.n("data")); ev[0].Message != want {
		t.Fatalf("event %q, want %q", ev[0].Message, want)
	}
	e.deletePod("first")
	e.waitNoAttachment(e.vaName("vol-1", "node-a"))
	e.setAttached(e.waitAttachment(e.vaName("vol-1", "node-b")))
	e.waitVolumesAttached("node-b", v1.UniqueVolumeName("kubernetes.io/csi/"+driver+"^vol-1"))
	e.waitVolumesAttached("node-a")
}
