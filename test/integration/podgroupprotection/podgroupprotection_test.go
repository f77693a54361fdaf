// Package podgroupprotection tests the podgroup-protection-controller
// against a real kube-apiserver, built through kcm's registry as the binary
// builds it.
package podgroupprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/controller/podgroupprotection"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// build runs kcm's registry entry of the controller through
// controllermanager.Build with --controllers=* and GenericWorkload as given.
func build(t *testing.T, cfg *rest.Config, gate bool) (*controllermanager.ControllerContext, []controllermanager.Controller) {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := features.AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(map[string]bool{string(features.GenericWorkload): gate}); err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.FeatureGate = fg
	reg := controllermanager.Registry{names.PodGroupProtection: app.NewRegistry()[names.PodGroupProtection]}
	ctrls, err := controllermanager.Build(context.Background(), cc, cc, reg, []string{"*"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cc, ctrls
}

func TestGate(t *testing.T) {
	cfg := framework.StartEnv(t)
	if _, ctrls := build(t, cfg, false); len(ctrls) != 0 {
		t.Errorf("GenericWorkload off: built %d controllers, want none", len(ctrls))
	}
	_, ctrls := build(t, cfg, true)
	if len(ctrls) != 1 || ctrls[0].Name() != names.PodGroupProtection {
		t.Fatalf("GenericWorkload on: built %v, want the %s", ctrls, names.PodGroupProtection)
	}
}

func TestFinalizerHeldWhileActivePodsNameTheGroup(t *testing.T) {
	cfg, ns := framework.Setup(t, "pgp-")
	cc, ctrls := build(t, cfg, true)
	if len(ctrls) != 1 {
		t.Fatalf("built %d controllers, want 1", len(ctrls))
	}
	framework.StartController(t, cc, ctrls[0])

	groups := ns.Client.SchedulingV1beta1().PodGroups(ns.Name)
	newGroup := func(name string) {
		pg := framework.Create(t, groups, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}})
		if !slices.Contains(pg.Finalizers, podgroupprotection.Finalizer) {
			t.Fatalf("PodGroup %s created with finalizers %v: the PodGroupProtection admission plugin did not run", name, pg.Finalizers)
		}
	}
	pods := ns.Client.CoreV1().Pods(ns.Name)
	newPod := func(name, group string) {
		framework.Create(t, pods, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}},
				SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}}})
	}
	gone := func(name string) {
		t.Helper()
		framework.Eventually(t, timeout, func() (bool, error) {
			_, err := groups.Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}
	held := func(name, why string) {
		t.Helper()
		framework.Consistently(t, 3*time.Second, why, func() bool {
			pg, err := groups.Get(context.Background(), name, metav1.GetOptions{})
			return err == nil && pg.DeletionTimestamp != nil && slices.Contains(pg.Finalizers, podgroupprotection.Finalizer)
		})
	}

	// A group no pod names goes as soon as it is deleted.
	newGroup("unused")
	if err := groups.Delete(context.Background(), "unused", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone("unused")

	// A group with two active pods is held until neither is active: one
	// finishes, the other is deleted.
	newGroup("gang")
	newPod("a", "gang")
	newPod("b", "gang")
	newPod("elsewhere", "other-group")
	if err := groups.Delete(context.Background(), "gang", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held("gang", "group held while two pods name it")
	framework.Update(t, timeout, podStatus{pods}, "a", func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded })
	held("gang", "group held while one pod is still active")
	if err := pods.Delete(context.Background(), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone("gang")
}

// podStatus updates pods through their status subresource.
type podStatus struct {
	pods interface {
		Get(context.Context, string, metav1.GetOptions) (*v1.Pod, error)
		UpdateStatus(context.Context, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error)
	}
}

func (p podStatus) Get(ctx context.Context, name string, o metav1.GetOptions) (*v1.Pod, error) {
	return p.pods.Get(ctx, name, o)
}

func (p podStatus) Update(ctx context.Context, pod *v1.Pod, o metav1.UpdateOptions) (*v1.Pod, error) {
	return p.pods.UpdateStatus(ctx, pod, o)
}
