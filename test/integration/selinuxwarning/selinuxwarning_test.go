// Package selinuxwarning tests the selinux-warning-controller against a
// real kube-apiserver.
package selinuxwarning

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/selinuxwarning"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout = 30 * time.Second
	metric  = "selinux_warning_controller_selinux_volume_conflict"
)

func setup(t *testing.T) framework.Namespace {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "selinux-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	c, err := selinuxwarning.New(ctx, cc, names.SELinuxWarning)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}
}

// boundClaim creates the claim "data" bound to a volume of the driver
// <namespace>.csi.example.com, as the binder would have left them, and
// returns the driver's name.
func boundClaim(n framework.Namespace) string {
	n.T.Helper()
	driver := n.Name + ".csi.example.com"
	size := v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	pvc, err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).Create(n.Ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: modes, VolumeName: n.Name + "-data", StorageClassName: ptr.To(""),
			Resources: v1.VolumeResourceRequirements{Requests: size}},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	if _, err := n.Client.CoreV1().PersistentVolumes().Create(n.Ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-data"},
		Spec: v1.PersistentVolumeSpec{AccessModes: modes, Capacity: size, StorageClassName: "",
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: n.Name, Name: "data", UID: pvc.UID},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: n.Name}}},
	}, metav1.CreateOptions{}); err != nil {
		n.T.Fatal(err)
	}
	pvc.Status.Phase = v1.ClaimBound
	if _, err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).UpdateStatus(n.Ctx, pvc, metav1.UpdateOptions{}); err != nil {
		n.T.Fatal(err)
	}
	return driver
}

// createDriver creates the CSIDriver name with seLinuxMount: true.
func createDriver(n framework.Namespace, name string) {
	n.T.Helper()
	drivers := n.Client.StorageV1().CSIDrivers()
	if _, err := drivers.Create(n.Ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSIDriverSpec{SELinuxMount: ptr.To(true)}}, metav1.CreateOptions{}); err != nil {
		n.T.Fatal(err)
	}
	n.T.Cleanup(func() { _ = drivers.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// waitConflictEvents waits for upstream's Event on pods a and b. Other
// conflict Events may come first: pods are looked at one at a time, so
// when a CSIDriver changes, the first one looked at conflicts with the
// other's old policy.
func waitConflictEvents(n framework.Namespace) {
	n.T.Helper()
	for _, tc := range []struct{ pod, other, value, otherValue string }{
		{"a", "b", "s0:c1,c2", "s0:c3,c4"},
		{"b", "a", "s0:c3,c4", "s0:c1,c2"},
	} {
		want := `SELinuxLabel ":::` + tc.value + `" conflicts with pod ` + tc.other + ` that uses the same volume as this pod with SELinuxLabel ":::` +
			tc.otherValue + `". If both pods land on the same node, only one of them may access the volume.`
		sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": tc.pod, "reason": "SELinuxLabelConflict"}.String()
		framework.Eventually(n.T, timeout, func() (bool, error) {
			list, err := n.Client.CoreV1().Events(n.Name).List(n.Ctx, metav1.ListOptions{FieldSelector: sel})
			if err != nil {
				return false, err
			}
			for _, e := range list.Items {
				if e.Message == want {
					if e.Type != v1.EventTypeNormal || e.Source.Component != "selinux_warning" {
						n.T.Errorf("pod %s: %s Event from %q, want Normal from selinux_warning", tc.pod, e.Type, e.Source.Component)
					}
					return true, nil
				}
			}
			return false, nil
		})
	}
}

func createPod(n framework.Namespace, name, level string) {
	n.T.Helper()
	if _, err := n.Client.CoreV1().Pods(n.Name).Create(n.Ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			SecurityContext: &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: level}},
			Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1",
				VolumeMounts: []v1.VolumeMount{{Name: "vol", MountPath: "/data"}}}},
			Volumes: []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		n.T.Fatal(err)
	}
}

// TestLabelConflict: two pods that mount one claim of a driver with
// seLinuxMount with different levels both get upstream's Event, and the
// conflict is in the metric until one of them goes.
func TestLabelConflict(t *testing.T) {
	n := setup(t)
	createDriver(n, boundClaim(n))
	createPod(n, "a", "s0:c1,c2")
	createPod(n, "b", "s0:c3,c4")
	waitConflictEvents(n)

	series := func(pod1, v1, pod2, v2 string) string {
		return metric + `{pod1_name="` + pod1 + `",pod1_namespace="` + n.Name + `",pod1_value=":::` + v1 + `",pod2_name="` + pod2 +
			`",pod2_namespace="` + n.Name + `",pod2_value=":::` + v2 + `",property="SELinuxLabel"} 1` + "\n"
	}
	header := "# HELP " + metric + " [ALPHA] Conflict between two Pods using the same volume\n# TYPE " + metric + " gauge\n"
	want := header + series("a", "s0:c1,c2", "b", "s0:c3,c4") + series("b", "s0:c3,c4", "a", "s0:c1,c2")
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), metric); err != nil {
		t.Error(err)
	}

	// b goes: no conflict is left.
	if err := n.Client.CoreV1().Pods(n.Name).Delete(n.Ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		return testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(""), metric) == nil, nil
	})
}

// TestCSIDriverAppears: without a CSIDriver (seLinuxMount false) the
// volume is relabelled recursively for each pod, which is no conflict; once
// the driver says seLinuxMount, the same pods conflict.
func TestCSIDriverAppears(t *testing.T) {
	n := setup(t)
	driver := boundClaim(n)
	createPod(n, "a", "s0:c1,c2")
	createPod(n, "b", "s0:c3,c4")
	framework.Consistently(t, 3*time.Second, "no Events", func() bool {
		list, err := n.Client.CoreV1().Events(n.Name).List(n.Ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	})
	createDriver(n, driver)
	waitConflictEvents(n)
}
