package selinuxwarning

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
)

type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	f        informers.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, Config{
		Name: "test", Client: client,
		PodInformer: f.Core().V1().Pods(), PVCInformer: f.Core().V1().PersistentVolumeClaims(),
		PVInformer: f.Core().V1().PersistentVolumes(), CSIDriverInformer: f.Storage().V1().CSIDrivers(),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.stopRecorder()
	rec := record.NewFakeRecorder(100)
	c.recorder = rec
	return &fixture{t: t, ctx: ctx, c: c, f: f, recorder: rec}
}

func (fx *fixture) add(objs ...any) {
	fx.t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Pod:
			err = fx.f.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.PersistentVolumeClaim:
			err = fx.f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
		case *v1.PersistentVolume:
			err = fx.f.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(o)
		case *storagev1.CSIDriver:
			err = fx.f.Storage().V1().CSIDrivers().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			fx.t.Fatal(err)
		}
	}
}

func (fx *fixture) sync(pod *v1.Pod) error {
	return fx.c.sync(fx.ctx, pod.Namespace+"/"+pod.Name)
}

// events returns the recorded Events, sorted.
func (fx *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-fx.recorder.Events:
			out = append(out, e)
		default:
			slices.Sort(out)
			return out
		}
	}
}

func csiDriver(name string, seLinuxMount *bool) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{SELinuxMount: seLinuxMount}}
}

// boundClaim returns a claim ns/name bound to a CSI volume of driver.
func boundClaim(ns, name, driver string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	uid := types.UID(ns + "-" + name)
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name}, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name}, Spec: v1.PersistentVolumeSpec{
		ClaimRef:               &v1.ObjectReference{Namespace: ns, Name: name, UID: uid},
		PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h-" + name}},
	}}
	return pvc, pv
}

type podOpt func(*v1.Pod)

func withLevel(level string) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
		}
		p.Spec.SecurityContext.SELinuxOptions = &v1.SELinuxOptions{Level: level}
	}
}

func withPolicy(policy v1.PodSELinuxChangePolicy) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
		}
		p.Spec.SecurityContext.SELinuxChangePolicy = &policy
	}
}

// pod returns a pod whose container mounts vol.
func pod(ns, name string, vol v1.VolumeSource, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.PodSpec{
		Volumes:    []v1.Volume{{Name: "data", VolumeSource: vol}},
		Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
	}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func claimSource(name string) v1.VolumeSource {
	return v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
}

func iscsiSource() v1.VolumeSource {
	return v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2024-01.example:t", Lun: 1}}
}

func TestSyncConflicts(t *testing.T) {
	const (
		labelMsg  = `Normal SELinuxLabelConflict SELinuxLabel ":::%s" conflicts with pod %s that uses the same volume as this pod with SELinuxLabel ":::%s". If both pods land on the same node, only one of them may access the volume.`
		policyMsg = `Normal SELinuxChangePolicyConflict SELinuxChangePolicy "%s" conflicts with pod %s that uses the same volume as this pod with SELinuxChangePolicy "%s". If both pods land on the same node, only one of them may access the volume.`
	)
	sprintf := func(format string, args ...string) string {
		for _, a := range args {
			format = strings.Replace(format, "%s", a, 1)
		}
		return format
	}
	for _, tc := range []struct {
		name   string
		driver *storagev1.CSIDriver
		a, b   []podOpt
		want   []string
	}{
		{
			name:   "levels differ, seLinuxMount",
			driver: csiDriver("d", ptr.To(true)),
			a:      []podOpt{withLevel("s0:c1,c2")}, b: []podOpt{withLevel("s0:c3,c4")},
			want: []string{
				sprintf(labelMsg, "s0:c1,c2", "b", "s0:c3,c4"),
				sprintf(labelMsg, "s0:c3,c4", "a", "s0:c1,c2"),
			},
		},
		{
			name:   "same level",
			driver: csiDriver("d", ptr.To(true)),
			a:      []podOpt{withLevel("s0:c1,c2")}, b: []podOpt{withLevel("s0:c1,c2")},
		},
		{
			name:   "levels differ, driver without seLinuxMount",
			driver: csiDriver("d", nil),
			a:      []podOpt{withLevel("s0:c1,c2")}, b: []podOpt{withLevel("s0:c3,c4")},
		},
		{
			name: "levels differ, no CSIDriver",
			a:    []podOpt{withLevel("s0:c1,c2")}, b: []podOpt{withLevel("s0:c3,c4")},
		},
		{
			name:   "one pod Recursive",
			driver: csiDriver("d", ptr.To(true)),
			a:      []podOpt{withLevel("s0:c1,c2")}, b: []podOpt{withLevel("s0:c1,c2"), withPolicy(recursive)},
			want: []string{
				sprintf(`Normal SELinuxLabelConflict SELinuxLabel "" conflicts with pod a that uses the same volume as this pod with SELinuxLabel ":::s0:c1,c2". If both pods land on the same node, only one of them may access the volume.`),
				sprintf(`Normal SELinuxLabelConflict SELinuxLabel ":::s0:c1,c2" conflicts with pod b that uses the same volume as this pod with SELinuxLabel "". If both pods land on the same node, only one of them may access the volume.`),
				sprintf(policyMsg, "MountOption", "b", "Recursive"),
				sprintf(policyMsg, "Recursive", "a", "MountOption"),
			},
		},
		{
			name:   "both Recursive",
			driver: csiDriver("d", ptr.To(true)),
			a:      []podOpt{withLevel("s0:c1,c2"), withPolicy(recursive)}, b: []podOpt{withLevel("s0:c3,c4"), withPolicy(recursive)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			pvc, pv := boundClaim("ns", "claim", "d")
			a, b := pod("ns", "a", claimSource("claim"), tc.a...), pod("ns", "b", claimSource("claim"), tc.b...)
			fx.add(pvc, pv, a, b)
			if tc.driver != nil {
				fx.add(tc.driver)
			}
			for _, p := range []*v1.Pod{a, b} {
				if err := fx.sync(p); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(tc.want)
			if got := fx.events(); !slices.Equal(got, tc.want) {
				t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// A second sync reports nothing new.
			if err := fx.sync(a); err != nil {
				t.Fatal(err)
			}
			if got := fx.events(); len(got) != 0 {
				t.Errorf("second sync: %v", got)
			}
		})
	}
}

func TestSyncOtherNamespaceAndInTree(t *testing.T) {
	fx := newFixture(t)
	a := pod("ns1", "a", iscsiSource(), withLevel("s0:c1"))
	b := pod("ns2", "b", iscsiSource(), withLevel("s0:c2"))
	// Container options replace the pod's.
	b.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c1"}}
	c := pod("ns2", "c", iscsiSource(), withLevel("s0:c2"))
	// hostPath never conflicts.
	h1 := pod("ns1", "h1", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}, withLevel("s0:c1"))
	h2 := pod("ns1", "h2", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}, withLevel("s0:c2"))
	fx.add(a, b, c, h1, h2)
	for _, p := range []*v1.Pod{a, b, h1, h2, c} {
		if err := fx.sync(p); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`Normal SELinuxLabelConflict SELinuxLabel":::s0:c1" conflicts with another pod that uses the same volume as this pod with a different SELinuxLabel. If both pods land on the same node, only one of them may access the volume.`,
		`Normal SELinuxLabelConflict SELinuxLabel ":::s0:c1" conflicts with pod c that uses the same volume as this pod with SELinuxLabel ":::s0:c2". If both pods land on the same node, only one of them may access the volume.`,
		`Normal SELinuxLabelConflict SELinuxLabel ":::s0:c2" conflicts with pod b that uses the same volume as this pod with SELinuxLabel ":::s0:c1". If both pods land on the same node, only one of them may access the volume.`,
		`Normal SELinuxLabelConflict SELinuxLabel":::s0:c2" conflicts with another pod that uses the same volume as this pod with a different SELinuxLabel. If both pods land on the same node, only one of them may access the volume.`,
	}
	slices.Sort(want)
	if got := fx.events(); !slices.Equal(got, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The metric: every current conflict, both ways.
	expected := `
# HELP selinux_warning_controller_selinux_volume_conflict [ALPHA] Conflict between two Pods using the same volume
# TYPE selinux_warning_controller_selinux_volume_conflict gauge
selinux_warning_controller_selinux_volume_conflict{pod1_name="a",pod1_namespace="ns1",pod1_value=":::s0:c1",pod2_name="c",pod2_namespace="ns2",pod2_value=":::s0:c2",property="SELinuxLabel"} 1
selinux_warning_controller_selinux_volume_conflict{pod1_name="b",pod1_namespace="ns2",pod1_value=":::s0:c1",pod2_name="c",pod2_namespace="ns2",pod2_value=":::s0:c2",property="SELinuxLabel"} 1
selinux_warning_controller_selinux_volume_conflict{pod1_name="c",pod1_namespace="ns2",pod1_value=":::s0:c2",pod2_name="a",pod2_namespace="ns1",pod2_value=":::s0:c1",property="SELinuxLabel"} 1
selinux_warning_controller_selinux_volume_conflict{pod1_name="c",pod1_namespace="ns2",pod1_value=":::s0:c2",pod2_name="b",pod2_namespace="ns2",pod2_value=":::s0:c1",property="SELinuxLabel"} 1
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(expected), "selinux_warning_controller_selinux_volume_conflict"); err != nil {
		t.Error(err)
	}

	// c finishes: its conflicts go.
	c.Status.Phase = v1.PodSucceeded
	fx.add(c)
	if err := fx.sync(c); err != nil {
		t.Fatal(err)
	}
	if got := fx.c.cache.conflicts(); len(got) != 0 {
		t.Errorf("conflicts after c finished: %+v", got)
	}
	// a is deleted: forgotten.
	if err := fx.f.Core().V1().Pods().Informer().GetIndexer().Delete(a); err != nil {
		t.Fatal(err)
	}
	if err := fx.sync(a); err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.c.cache.byPod[ref("ns1", "a")]; ok {
		t.Error("deleted pod still recorded")
	}
}

func TestSyncErrors(t *testing.T) {
	fx := newFixture(t)
	pvc, pv := boundClaim("ns", "claim", "d")
	pvc.Status.Phase = v1.ClaimPending
	p := pod("ns", "p", claimSource("claim"), withLevel("s0:c1"))
	fx.add(pvc, pv, p)
	err := fx.sync(p)
	if err == nil || controller.IsPermanent(err) {
		t.Errorf("unbound claim: %v, want an error to retry", err)
	}

	// One volume, two labels: a Warning, and no retry.
	m := pod("ns", "m", iscsiSource(), withLevel("s0:c1"))
	m.Spec.InitContainers = []v1.Container{{Name: "init", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/d"}},
		SecurityContext: &v1.SecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c2"}}}}
	fx.add(m)
	if err := fx.sync(m); !controller.IsPermanent(err) {
		t.Errorf("multiple labels: %v, want a permanent error", err)
	}
	want := []string{`Warning MultipleSELinuxLabels Volume "data" is mounted twice with different SELinux labels inside this pod`}
	if got := fx.events(); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestMountedVolumes(t *testing.T) {
	p := &v1.Pod{Spec: v1.PodSpec{
		SecurityContext: &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{User: "u", Role: "r", Type: "t", Level: "s0"}},
		InitContainers:  []v1.Container{{VolumeMounts: []v1.VolumeMount{{Name: "a"}}}},
		Containers: []v1.Container{
			{VolumeMounts: []v1.VolumeMount{{Name: "a"}, {Name: "b"}}, SecurityContext: &v1.SecurityContext{SELinuxOptions: &v1.SELinuxOptions{}}},
			{VolumeDevices: []v1.VolumeDevice{{Name: "dev"}}},
		},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{VolumeMounts: []v1.VolumeMount{{Name: "c"}}}}},
	}}
	got := mountedVolumes(p)
	want := []mountedVolume{{"a", []string{"u:r:t:s0", ""}}, {"b", []string{""}}, {"c", []string{"u:r:t:s0"}}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].name != want[i].name || !slices.Equal(got[i].labels, want[i].labels) {
			t.Errorf("volume %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestVolumeNames(t *testing.T) {
	lun := int32(3)
	for _, tc := range []struct {
		src  v1.PersistentVolumeSource
		want mountable
	}{
		{v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, mountable{name: "kubernetes.io/csi/d^h", csiDriver: "d"}},
		{v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{TargetWWNs: []string{"w1", "w2"}, Lun: &lun}}, mountable{name: "kubernetes.io/fc/[w1 w2]:3", contextMount: true}},
		{v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{WWIDs: []string{"id"}}}, mountable{name: "kubernetes.io/fc/[id]", contextMount: true}},
		{v1.PersistentVolumeSource{ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p", IQN: "q", Lun: 2}}, mountable{name: "kubernetes.io/iscsi/p:q:2", contextMount: true}},
		{v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/vol-0123"}}, mountable{name: "kubernetes.io/csi/ebs.csi.aws.com^vol-0123", csiDriver: "ebs.csi.aws.com"}},
		{v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/p"}}, mountable{}},
	} {
		if got := persistentMountable(&v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: tc.src}}); got != tc.want {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	}
}

func TestCSIDriverHandlers(t *testing.T) {
	fx := newFixture(t)
	pvc, pv := boundClaim("ns", "claim", "d")
	a := pod("ns", "a", claimSource("claim"), withLevel("s0:c1"))
	fx.add(pvc, pv, a)
	if err := fx.sync(a); err != nil {
		t.Fatal(err)
	}
	off, on := csiDriver("d", nil), csiDriver("d", ptr.To(true))
	for _, tc := range []struct {
		name string
		do   func()
		want int
	}{
		{"add", func() { fx.c.addCSIDriver(on) }, 1},
		{"update without seLinuxMount change", func() { fx.c.updateCSIDriver(on, on) }, 0},
		{"update", func() { fx.c.updateCSIDriver(off, on) }, 1},
		{"delete of a driver without seLinuxMount", func() { fx.c.deleteCSIDriver(off) }, 0},
		{"delete", func() { fx.c.deleteCSIDriver(on) }, 1},
		{"other driver", func() { fx.c.addCSIDriver(csiDriver("other", ptr.To(true))) }, 0},
	} {
		tc.do()
		if n := fx.c.queue.Len(); n != tc.want {
			t.Errorf("%s: %d queued, want %d", tc.name, n, tc.want)
		}
		for fx.c.queue.Len() > 0 {
			k, _ := fx.c.queue.Get()
			if k != "ns/a" {
				t.Errorf("%s: queued %q", tc.name, k)
			}
			fx.c.queue.Done(k)
		}
	}
}
