package attachdetach

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const (
	driver = "hostpath.csi.example.com"
	handle = "vol-1"
)

type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	c       *Controller
	clock   *testingclock.FakeClock
	events  *record.FakeRecorder
}

func newFixture(t *testing.T, opts Options, objs ...runtime.Object) *fixture {
	t.Helper()
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, err := newController(context.Background(), "attachdetach", client, clk,
		factory.Core().V1().Pods(), factory.Core().V1().Nodes(), factory.Core().V1().PersistentVolumeClaims(),
		factory.Core().V1().PersistentVolumes(), factory.Storage().V1().CSIDrivers(), factory.Storage().V1().VolumeAttachments(), opts)
	if err != nil {
		t.Fatal(err)
	}
	c.stop()
	events := record.NewFakeRecorder(100)
	c.recorder = events
	f := &fixture{t: t, client: client, factory: factory, c: c, clock: clk, events: events}
	for _, o := range objs {
		f.cache(o)
	}
	return f
}

// cache puts obj in the informer stores (the informers are not started).
func (f *fixture) cache(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Pod:
		err = f.factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
	case *v1.Node:
		err = f.factory.Core().V1().Nodes().Informer().GetIndexer().Add(o)
	case *v1.PersistentVolumeClaim:
		err = f.factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
	case *v1.PersistentVolume:
		err = f.factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(o)
	case *storagev1.CSIDriver:
		err = f.factory.Storage().V1().CSIDrivers().Informer().GetIndexer().Add(o)
	case *storagev1.VolumeAttachment:
		err = f.factory.Storage().V1().VolumeAttachments().Informer().GetIndexer().Add(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) uncache(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Pod:
		err = f.factory.Core().V1().Pods().Informer().GetIndexer().Delete(o)
	case *storagev1.VolumeAttachment:
		err = f.factory.Storage().V1().VolumeAttachments().Informer().GetIndexer().Delete(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync(node string) {
	f.t.Helper()
	f.client.ClearActions()
	if err := f.c.syncNode(context.Background(), node); err != nil {
		f.t.Fatalf("sync %s: %v", node, err)
	}
}

// refreshNode copies the node from the fake API into the informer, as a
// watch event would.
func (f *fixture) refreshNode(name string) *v1.Node {
	f.t.Helper()
	n, err := f.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cache(n)
	return n
}

func (f *fixture) attachment(node string) *storagev1.VolumeAttachment {
	f.t.Helper()
	va, err := f.client.StorageV1().VolumeAttachments().Get(context.Background(), attachmentName(handle, driver, node), metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("VolumeAttachment for %s: %v", node, err)
	}
	return va
}

// markAttached plays the external attacher.
func (f *fixture) markAttached(node string) {
	va := f.attachment(node)
	va.Status.Attached = true
	f.cache(va)
}

func (f *fixture) verbs() []string {
	var out []string
	for _, a := range f.client.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

func (f *fixture) wantVerbs(want ...string) {
	f.t.Helper()
	if got := f.verbs(); strings.Join(got, ",") != strings.Join(want, ",") {
		f.t.Fatalf("requests: got %v, want %v", got, want)
	}
}

func (f *fixture) wantEvent(want string) {
	f.t.Helper()
	select {
	case e := <-f.events.Events:
		if e != want {
			f.t.Fatalf("event: got %q, want %q", e, want)
		}
	default:
		f.t.Fatalf("no event, want %q", want)
	}
}

func (f *fixture) noEvent() {
	f.t.Helper()
	select {
	case e := <-f.events.Events:
		f.t.Fatalf("unexpected event %q", e)
	default:
	}
}

func managedNode(name string, ready bool) *v1.Node {
	status := v1.ConditionTrue
	if !ready {
		status = v1.ConditionFalse
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
			Annotations: map[string]string{managedAnnotation: "true"}},
		Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: status}}},
	}
}

func boundClaim(modes ...v1.PersistentVolumeAccessMode) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "pvc-uid"},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-1", AccessModes: modes},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:            modes,
			ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "data", UID: "pvc-uid"},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}},
		},
	}
	return pvc, pv
}

func podOn(name, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: node, Volumes: []v1.Volume{{Name: "data",
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

func TestAttachmentName(t *testing.T) {
	want := fmt.Sprintf("csi-%x", sha256.Sum256([]byte("vol-1"+driver+"node-a")))
	if got := attachmentName("vol-1", driver, "node-a"); got != want || len(got) != 68 {
		t.Fatalf("got %s, want %s", got, want)
	}
	d, h, ok := splitUniqueVolumeName(uniqueVolumeName(driver, "a/b"))
	if !ok || d != driver || h != "a/b" {
		t.Fatalf("split: %s %s %v", d, h, ok)
	}
	if _, _, ok := splitUniqueVolumeName("kubernetes.io/iscsi/x"); ok {
		t.Fatal("a non-CSI name split")
	}
}

func TestAttachThenDetach(t *testing.T) {
	pvc, pv := boundClaim()
	pod := podOn("web", "node-a")
	f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, pod)

	f.sync("node-a")
	f.wantVerbs("create volumeattachments")
	va := f.attachment("node-a")
	if va.Spec.NodeName != "node-a" || va.Spec.Attacher != driver || ptr.Deref(va.Spec.Source.PersistentVolumeName, "") != "pv-1" {
		t.Fatalf("VolumeAttachment spec: %+v", va.Spec)
	}
	f.cache(va)
	f.sync("node-a") // not attached yet: waits, writes nothing
	f.wantVerbs()
	f.noEvent()

	f.markAttached("node-a")
	f.sync("node-a")
	f.wantVerbs("patch nodes/status")
	f.wantEvent(`Normal SuccessfulAttachVolume AttachVolume.Attach succeeded for volume "pv-1" `)
	node := f.refreshNode("node-a")
	want := uniqueVolumeName(driver, handle)
	if len(node.Status.VolumesAttached) != 1 || node.Status.VolumesAttached[0].Name != want {
		t.Fatalf("volumesAttached: %+v", node.Status.VolumesAttached)
	}
	f.sync("node-a")
	f.wantVerbs() // nothing changed

	// The kubelet mounts it; the pod goes: no detach while in use.
	node.Status.VolumesInUse = []v1.UniqueVolumeName{want}
	node.ResourceVersion = "5"
	f.cache(node)
	f.uncache(pod)
	f.sync("node-a")
	f.wantVerbs()

	node.Status.VolumesInUse = nil
	node.ResourceVersion = "6"
	f.cache(node)
	f.sync("node-a")
	f.wantVerbs("patch nodes/status", "get nodes", "delete volumeattachments")
	if n := f.refreshNode("node-a"); len(n.Status.VolumesAttached) != 0 {
		t.Fatalf("volumesAttached after detach: %+v", n.Status.VolumesAttached)
	}
	f.uncache(va)
	f.sync("node-a")
	f.wantVerbs()
	if _, ok := f.c.state.nodes["node-a"].volumes[want]; ok {
		t.Fatal("volume still known after its VolumeAttachment went")
	}
}

func TestNothingToAttach(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []runtime.Object
	}{
		{"unmanaged node", []runtime.Object{&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}}},
		{"attachRequired false", []runtime.Object{managedNode("node-a", true),
			&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}}}},
		{"claim not bound", []runtime.Object{managedNode("node-a", true), &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pvc, pv := boundClaim()
			objs := append([]runtime.Object{pv, podOn("web", "node-a")}, tc.objs...)
			if tc.name != "claim not bound" {
				objs = append(objs, pvc)
			}
			f := newFixture(t, Options{}, objs...)
			f.sync("node-a")
			f.wantVerbs()
		})
	}
	t.Run("succeeded pod and inline CSI", func(t *testing.T) {
		pvc, pv := boundClaim()
		done := podOn("done", "node-a")
		done.Status.Phase = v1.PodSucceeded
		inline := podOn("inline", "node-a")
		inline.Spec.Volumes = []v1.Volume{{Name: "x", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: driver}}}}
		f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, done, inline)
		f.sync("node-a")
		f.wantVerbs()
	})
	t.Run("attachRequired true", func(t *testing.T) {
		pvc, pv := boundClaim()
		f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, podOn("web", "node-a"),
			&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)}})
		f.sync("node-a")
		f.wantVerbs("create volumeattachments")
	})
}

func TestAttachErrorAndTimeout(t *testing.T) {
	pvc, pv := boundClaim()
	f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, podOn("web", "node-a"))
	f.sync("node-a")
	va := f.attachment("node-a")
	va.Status.AttachError = &storagev1.VolumeError{Message: "rpc error: no such disk"}
	f.cache(va)
	f.sync("node-a")
	f.wantEvent(`Warning FailedAttachVolume AttachVolume.Attach failed for volume "pv-1" : rpc error: no such disk`)
	// Backing off: nothing before 500ms, then a new attempt (the object
	// exists, no create) that fails again.
	f.sync("node-a")
	f.noEvent()
	f.clock.Step(600 * time.Millisecond)
	f.sync("node-a")
	f.wantVerbs()
	f.wantEvent(`Warning FailedAttachVolume AttachVolume.Attach failed for volume "pv-1" : rpc error: no such disk`)

	// No error, no attacher: the attempt times out after two minutes.
	va.Status.AttachError = nil
	f.cache(va)
	f.clock.Step(2 * time.Second)
	f.sync("node-a")
	f.noEvent()
	f.clock.Step(opTimeout)
	f.sync("node-a")
	f.wantEvent(`Warning FailedAttachVolume AttachVolume.Attach failed for volume "pv-1" : timed out waiting for external-attacher of hostpath.csi.example.com CSI driver to attach volume vol-1`)
}

func TestForceDetach(t *testing.T) {
	name := uniqueVolumeName(driver, handle)
	for _, tc := range []struct {
		name         string
		ready        bool
		taint        bool
		disableForce bool
		wait         time.Duration
		want         []string
		forced       string // the reason counted in forced_detaches
	}{
		{"mounted, before the timeout", false, false, false, time.Minute, nil, ""},
		{"mounted, healthy node after the timeout", true, false, false, 7 * time.Minute, nil, ""},
		{"mounted, unhealthy node after the timeout", false, false, false, 7 * time.Minute, []string{"patch nodes/status", "delete volumeattachments"}, forceDetachReasonTimeout},
		{"force detach disabled", false, false, true, 7 * time.Minute, nil, ""},
		{"out-of-service taint", true, true, false, 0, []string{"patch nodes/status", "delete volumeattachments"}, forceDetachReasonOutOfService},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := managedNode("node-a", tc.ready)
			node.Status.VolumesAttached = []v1.AttachedVolume{{Name: name}}
			node.Status.VolumesInUse = []v1.UniqueVolumeName{name}
			if tc.taint {
				node.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeOutOfService, Effect: v1.TaintEffectNoExecute}}
			}
			f := newFixture(t, Options{DisableForceDetachOnTimeout: tc.disableForce}, node)
			if err := f.c.populate(klogDiscard()); err != nil {
				t.Fatal(err)
			}
			timeouts, outOfService := forcedDetachCount(t, forceDetachReasonTimeout), forcedDetachCount(t, forceDetachReasonOutOfService)
			f.sync("node-a")
			if tc.wait > 0 {
				f.clock.Step(tc.wait)
				f.sync("node-a")
			}
			f.wantVerbs(tc.want...)
			timeouts, outOfService = forcedDetachCount(t, forceDetachReasonTimeout)-timeouts, forcedDetachCount(t, forceDetachReasonOutOfService)-outOfService
			switch {
			case tc.forced == forceDetachReasonTimeout && (timeouts != 1 || outOfService != 0),
				tc.forced == forceDetachReasonOutOfService && (timeouts != 0 || outOfService != 1),
				tc.forced == "" && timeouts+outOfService != 0:
				t.Fatalf("forced detaches counted: timeout +%v, out-of-service +%v; want one %q", timeouts, outOfService, tc.forced)
			}
		})
	}
}

func TestMultiAttach(t *testing.T) {
	pvc, pv := boundClaim()
	a, b := podOn("first", "node-a"), podOn("second", "node-b")
	f := newFixture(t, Options{}, managedNode("node-a", true), managedNode("node-b", true), pvc, pv, a, b)
	f.sync("node-a")
	f.markAttached("node-a")
	f.sync("node-a")
	f.wantEvent(`Normal SuccessfulAttachVolume AttachVolume.Attach succeeded for volume "pv-1" `)
	f.sync("node-b")
	f.wantVerbs()
	f.wantEvent(`Warning FailedAttachVolume Waiting for detach for volume "pv-1" Volume is already used by pod(s) first`)
	f.sync("node-b") // reported once
	f.noEvent()

	// The first pod goes: node-a detaches, which wakes node-b.
	f.uncache(a)
	n := f.refreshNode("node-a") // the status write is a node event: nothing mounted
	n.ResourceVersion = "2"
	f.cache(n)
	f.sync("node-a")
	f.wantVerbs("patch nodes/status", "get nodes", "delete volumeattachments")
	f.uncache(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: attachmentName(handle, driver, "node-a")}})
	f.sync("node-a")
	if f.c.queue.Len() != 1 {
		t.Fatalf("queue length %d, want node-b queued", f.c.queue.Len())
	}
	f.sync("node-b")
	f.wantVerbs("create volumeattachments")

	// ReadWriteMany volumes attach to several nodes at once.
	pvc2, pv2 := boundClaim(v1.ReadWriteMany)
	g := newFixture(t, Options{}, managedNode("node-a", true), managedNode("node-b", true), pvc2, pv2, podOn("first", "node-a"), podOn("second", "node-b"))
	g.sync("node-a")
	g.markAttached("node-a")
	g.sync("node-a")
	g.sync("node-b")
	g.wantVerbs("create volumeattachments")
}

func TestVerifyReattaches(t *testing.T) {
	pvc, pv := boundClaim()
	f := newFixture(t, Options{SyncPeriod: time.Minute}, managedNode("node-a", true), pvc, pv, podOn("web", "node-a"))
	f.sync("node-a")
	f.markAttached("node-a")
	f.sync("node-a")
	f.refreshNode("node-a")
	// Someone deletes the VolumeAttachment: the periodic check notices,
	// the node stops reporting the volume and it is attached again.
	va := f.attachment("node-a")
	if err := f.client.StorageV1().VolumeAttachments().Delete(context.Background(), va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.uncache(va)
	f.client.ClearActions()
	if err := f.c.verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.wantVerbs("get volumeattachments")
	f.sync("node-a")
	f.wantVerbs("create volumeattachments", "patch nodes/status")
}

func TestEphemeralClaimMustBeOwned(t *testing.T) {
	pod := podOn("web", "node-a")
	pod.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}}
	pvc, pv := boundClaim()
	pvc.Name = "web-scratch"
	pv.Spec.ClaimRef.Name = "web-scratch"
	f := newFixture(t, Options{}, managedNode("node-a", true), pvc, pv, pod)
	f.sync("node-a")
	f.wantVerbs() // not owned by the pod: not its volume

	owned := pvc.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web", UID: pod.UID, Controller: ptr.To(true)}}
	f.cache(owned)
	f.sync("node-a")
	f.wantVerbs("create volumeattachments")
}

func klogDiscard() klog.Logger { return klog.Background() }

// After a restart, a VolumeAttachment no pod needs any more (its volume not
// in the node's status: uncertain) is detached, and a volume the node
// reports that a pod still uses stays attached and reported.
func TestRestartRecovery(t *testing.T) {
	pvc, pv := boundClaim()
	pvc2, pv2 := boundClaim()
	pvc2.Name, pvc2.UID, pvc2.Spec.VolumeName = "old", "pvc-old", "pv-old"
	pv2.Name, pv2.Spec.ClaimRef.Name, pv2.Spec.ClaimRef.UID, pv2.Spec.CSI.VolumeHandle = "pv-old", "old", "pvc-old", "vol-old"
	node := managedNode("node-a", true)
	node.Status.VolumesAttached = []v1.AttachedVolume{{Name: uniqueVolumeName(driver, handle)}}
	stale := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: attachmentName("vol-old", driver, "node-a")},
		Spec:   storagev1.VolumeAttachmentSpec{NodeName: "node-a", Attacher: driver, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-old")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	current := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: attachmentName(handle, driver, "node-a")},
		Spec:   storagev1.VolumeAttachmentSpec{NodeName: "node-a", Attacher: driver, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	f := newFixture(t, Options{}, node, pvc, pv, pvc2, pv2, podOn("web", "node-a"), stale, current)
	if err := f.c.populate(klogDiscard()); err != nil {
		t.Fatal(err)
	}
	// The uncertain entry counts as mounted until the node changes.
	f.sync("node-a")
	f.wantVerbs()
	node.ResourceVersion = "2"
	f.cache(node)
	f.sync("node-a")
	f.wantVerbs("get nodes", "delete volumeattachments")
	f.noEvent()
	if a := f.c.state.nodes["node-a"].volumes[uniqueVolumeName(driver, handle)]; a == nil || !a.confirmed || !a.reported {
		t.Fatalf("reported volume lost: %+v", a)
	}
}
