// Package pvcprotection tests the persistentvolumeclaim-protection-controller
// against a real kube-apiserver (whose StorageObjectInUseProtection
// admission adds the finalizer at creation). There is no scheduler or
// kubelet: tests bind pods and delete them themselves.
package pvcprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/pvcprotection"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout   = 30 * time.Second
	finalizer = "kubernetes.io/pvc-protection"
)

func setup(t *testing.T) framework.Namespace {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pvcp-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	c, err := pvcprotection.New(ctx, cc, names.PersistentVolumeClaimProtection)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}
}

func createClaim(n framework.Namespace, name string) {
	n.T.Helper()
	_, err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).Create(n.Ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
}

func createPodUsing(n framework.Namespace, name, claim string) {
	n.T.Helper()
	_, err := n.Client.CoreV1().Pods(n.Name).Create(n.Ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
}

func getClaim(n framework.Namespace, name string) (*v1.PersistentVolumeClaim, error) {
	return n.Client.CoreV1().PersistentVolumeClaims(n.Name).Get(n.Ctx, name, metav1.GetOptions{})
}

func waitGone(n framework.Namespace, name string) {
	n.T.Helper()
	framework.Eventually(n.T, timeout, func() (bool, error) {
		_, err := getClaim(n, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// TestDeletionHeldWhileAPodRuns: a claim deleted under a scheduled pod
// stays until the pod is gone.
func TestDeletionHeldWhileAPodRuns(t *testing.T) {
	n := setup(t)
	createClaim(n, "data")
	createPodUsing(n, "web", "data")
	n.Bind("web", "node-1")
	n.SetRunning("web", true)
	if err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).Delete(n.Ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 3*time.Second, "claim kept while its pod runs", func() bool {
		c, err := getClaim(n, "data")
		return err == nil && c.DeletionTimestamp != nil && slices.Contains(c.Finalizers, finalizer)
	})
	if err := n.Client.CoreV1().Pods(n.Name).Delete(n.Ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitGone(n, "data")
}

// TestUnscheduledPodDoesNotHold: the kubelet never starts a pod whose claim
// is being deleted, so an unscheduled pod does not block the deletion.
func TestUnscheduledPodDoesNotHold(t *testing.T) {
	n := setup(t)
	createClaim(n, "data")
	createPodUsing(n, "pending", "data")
	if err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).Delete(n.Ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(n, "data")
}

// TestFinalizerRestored: a live claim that lost the finalizer gets it back.
func TestFinalizerRestored(t *testing.T) {
	n := setup(t)
	createClaim(n, "data")
	if _, err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).Patch(n.Ctx, "data", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		c, err := getClaim(n, "data")
		return err == nil && slices.Contains(c.Finalizers, finalizer), err
	})
}

// TestUnusedCondition: a Bound claim is Unused until a pod refers to it.
func TestUnusedCondition(t *testing.T) {
	n := setup(t)
	createClaim(n, "data")
	c, err := getClaim(n, "data")
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Phase = v1.ClaimBound
	if _, err := n.Client.CoreV1().PersistentVolumeClaims(n.Name).UpdateStatus(n.Ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition := func(status v1.ConditionStatus, reason string) {
		t.Helper()
		framework.Eventually(t, timeout, func() (bool, error) {
			c, err := getClaim(n, "data")
			if err != nil {
				return false, err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == v1.PersistentVolumeClaimUnused {
					return cond.Status == status && cond.Reason == reason, nil
				}
			}
			return false, nil
		})
	}
	waitCondition(v1.ConditionTrue, "NoPodsUsingPVC")
	createPodUsing(n, "web", "data")
	waitCondition(v1.ConditionFalse, "PodUsingPVC")
	if err := n.Client.CoreV1().Pods(n.Name).Delete(n.Ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitCondition(v1.ConditionTrue, "NoPodsUsingPVC")
}
