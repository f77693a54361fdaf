package persistentvolume

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

const ns = "ns"

// fixture is a controller on a fake clientset whose informers are filled
// by hand (never started); its own view is initialised from them.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
	factory  informers.SharedInformerFactory
}

func newFixture(t *testing.T, cfg Config, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := fake.NewClientset(objs...)
	// The API server gives created objects a resourceVersion; the
	// controller's view needs one.
	client.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if acc, err := meta.Accessor(action.(clienttesting.CreateAction).GetObject()); err == nil && acc.GetResourceVersion() == "" {
			acc.SetResourceVersion("1")
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	cfg.Client = client
	cfg.Informers = factory
	cfg.Name = "persistentvolume-binder-controller"
	if cfg.ProvisionRetryInterval == 0 {
		cfg.ProvisionRetryInterval = time.Millisecond
	}
	c, err := NewController(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	recorder := record.NewFakeRecorder(100)
	c.recorder = recorder
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *v1.PersistentVolume:
			err = factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(o)
		case *v1.PersistentVolumeClaim:
			err = factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
		case *storagev1.StorageClass:
			err = factory.Storage().V1().StorageClasses().Informer().GetIndexer().Add(o)
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.Node:
			err = factory.Core().V1().Nodes().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c.initializeCaches(klog.FromContext(ctx))
	t.Cleanup(func() {
		cancel()
		c.ops.wait()
	})
	return &fixture{t: t, ctx: ctx, c: c, client: client, recorder: recorder, factory: factory}
}

// syncClaim syncs the claim as the controller's view has it.
func (f *fixture) syncClaim(name string) error {
	f.t.Helper()
	claim, found, err := f.c.getClaim(ns + "/" + name)
	if err != nil || !found {
		f.t.Fatalf("claim %s not in the controller's view: %v", name, err)
	}
	return f.c.syncClaim(f.ctx, claim)
}

func (f *fixture) syncVolume(name string) error {
	f.t.Helper()
	pv, found, err := f.c.volumes.get(name)
	if err != nil || !found {
		f.t.Fatalf("volume %s not in the controller's view: %v", name, err)
	}
	return f.c.syncVolume(f.ctx, pv)
}

func (f *fixture) pv(name string) *v1.PersistentVolume {
	f.t.Helper()
	pv, err := f.client.CoreV1().PersistentVolumes().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return pv
}

func (f *fixture) pvc(name string) *v1.PersistentVolumeClaim {
	f.t.Helper()
	claim, err := f.client.CoreV1().PersistentVolumeClaims(ns).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return claim
}

// events drains the recorded Events ("Type Reason Message").
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// waitEvent polls until an Event starting with prefix was recorded.
func (f *fixture) waitEvent(prefix string) string {
	f.t.Helper()
	var seen []string
	var found string
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, e := range f.events() {
			seen = append(seen, e)
			if strings.HasPrefix(e, prefix) {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		f.t.Fatalf("no Event %q; saw %q", prefix, seen)
	}
	return found
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// Builders.

type pvOpt func(*v1.PersistentVolume)

func newPV(name, size string, opts ...pvOpt) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "example.com/csi", VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

func withModes(m ...v1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = m }
}
func withClass(c string) pvOpt { return func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = c } }
func withLabels(l map[string]string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Labels = l }
}
func withPhase(p v1.PersistentVolumePhase) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Status.Phase = p }
}
func withPolicy(p v1.PersistentVolumeReclaimPolicy) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = p }
}
func withClaimRef(claim string, uid types.UID) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim, UID: uid}
	}
}
func withAnnotation(k, v string) pvOpt {
	return func(pv *v1.PersistentVolume) { metav1.SetMetaDataAnnotation(&pv.ObjectMeta, k, v) }
}
func withBlock() pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }
}
func withSource(s v1.PersistentVolumeSource) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.PersistentVolumeSource = s }
}
func withVAC(name string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = &name }
}

type pvcOpt func(*v1.PersistentVolumeClaim)

func newPVC(name, size string, opts ...pvcOpt) *v1.PersistentVolumeClaim {
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: ptr.To(""),
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	for _, o := range opts {
		o(claim)
	}
	return claim
}

func claimModes(m ...v1.PersistentVolumeAccessMode) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.AccessModes = m }
}
func claimClass(name *string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = name }
}
func claimVolume(name string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = name }
}
func claimSelector(l map[string]string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.Selector = &metav1.LabelSelector{MatchLabels: l} }
}
func claimAnnotation(k, v string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { metav1.SetMetaDataAnnotation(&c.ObjectMeta, k, v) }
}
func claimBlock() pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }
}
func claimVAC(name string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = &name }
}

func newClass(name, provisioner string, mode storagev1.VolumeBindingMode, ann ...string) *storagev1.StorageClass {
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Provisioner:       provisioner,
		ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: &mode,
	}
	for i := 0; i+1 < len(ann); i += 2 {
		metav1.SetMetaDataAnnotation(&class.ObjectMeta, ann[i], ann[i+1])
	}
	return class
}

func newPod(name, claim, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ResourceVersion: "1"},
		Spec: v1.PodSpec{
			NodeName: node,
			Volumes:  []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
}

var errTest = errors.New("test failure")

func klogFrom(ctx context.Context) klog.Logger { return klog.FromContext(ctx) }

// deleteClaim removes the claim from the API, the informer and the
// controller's view.
func (f *fixture) deleteClaim(name string) {
	f.t.Helper()
	claim := f.pvc(name)
	if err := f.client.CoreV1().PersistentVolumeClaims(ns).Delete(f.ctx, name, metav1.DeleteOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Delete(claim); err != nil {
		f.t.Fatal(err)
	}
	if err := f.c.claims.Delete(claim); err != nil {
		f.t.Fatal(err)
	}
}
