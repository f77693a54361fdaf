// Package resourceclaim tests the resourceclaim-controller against a real
// kube-apiserver (resource.k8s.io/v1 is served by default in v1.37).
package resourceclaim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/resourceclaim"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func setup(t *testing.T) framework.Namespace {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.ResourceClaimController.ConcurrentSyncs = 2
	c, err := resourceclaim.New(ctx, cc, names.ResourceClaim)
	if err != nil {
		t.Fatal(err)
	}
	framework.StartController(t, cc, c)
	return framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}
}

func claimSpec() resourceapi.ResourceClaimSpec {
	return resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
		Name:    "gpu",
		Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com"},
	}}}}
}

func createTemplate(n framework.Namespace, name string) {
	n.T.Helper()
	if _, err := n.Client.ResourceV1().ResourceClaimTemplates(n.Name).Create(n.Ctx, &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "from-template"}},
			Spec:       claimSpec(),
		},
	}, metav1.CreateOptions{}); err != nil {
		n.T.Fatal(err)
	}
}

// createPod creates a pod with one claim, from a template or naming a
// claim, optionally already bound to a node.
func createPod(n framework.Namespace, name, claimName string, podClaim v1.PodResourceClaim, node string) *v1.Pod {
	n.T.Helper()
	podClaim.Name = claimName
	p, err := n.Client.CoreV1().Pods(n.Name).Create(n.Ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeName:       node,
			Containers:     []v1.Container{{Name: "c", Image: "registry.example/gpu:1", Resources: v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: claimName}}}}},
			ResourceClaims: []v1.PodResourceClaim{podClaim},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	return p
}

func fromTemplate(name string) v1.PodResourceClaim {
	return v1.PodResourceClaim{ResourceClaimTemplateName: ptr.To(name)}
}

// waitGenerated waits for the pod's status to name its claim and returns
// that claim.
func waitGenerated(n framework.Namespace, pod *v1.Pod, claimName string) *resourceapi.ResourceClaim {
	n.T.Helper()
	var claim *resourceapi.ResourceClaim
	framework.Eventually(n.T, timeout, func() (bool, error) {
		p, err := n.Client.CoreV1().Pods(n.Name).Get(n.Ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range p.Status.ResourceClaimStatuses {
			if s.Name == claimName && s.ResourceClaimName != nil {
				claim, err = n.Client.ResourceV1().ResourceClaims(n.Name).Get(n.Ctx, *s.ResourceClaimName, metav1.GetOptions{})
				return err == nil, err
			}
		}
		return false, nil
	})
	return claim
}

// allocate writes an allocation, and the finalizer the scheduler adds with
// it, as the scheduler would.
func allocate(n framework.Namespace, claim *resourceapi.ResourceClaim, reservedFor ...resourceapi.ResourceClaimConsumerReference) *resourceapi.ResourceClaim {
	n.T.Helper()
	claims := n.Client.ResourceV1().ResourceClaims(n.Name)
	claim = framework.Update(n.T, timeout, claims, claim.Name, func(c *resourceapi.ResourceClaim) {
		if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
			c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
		}
	})
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
		Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0",
	}}}}
	claim.Status.ReservedFor = reservedFor
	claim, err := claims.UpdateStatus(n.Ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		n.T.Fatal(err)
	}
	return claim
}

func podRef(pod *v1.Pod) resourceapi.ResourceClaimConsumerReference {
	return resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID}
}

// TestClaimFromTemplate: the pod's claim is created from its template with
// upstream's name, labels, annotations and owner, and recorded in the
// pod's status by server-side apply under upstream's field manager.
func TestClaimFromTemplate(t *testing.T) {
	n := setup(t)
	createTemplate(n, "gpu-template")
	pod := createPod(n, "trainer", "gpu", fromTemplate("gpu-template"), "")
	claim := waitGenerated(n, pod, "gpu")

	if !strings.HasPrefix(claim.Name, "trainer-gpu-") || len(claim.Name) != len("trainer-gpu-")+5 {
		t.Errorf("claim name %q, want trainer-gpu- and five random characters", claim.Name)
	}
	if claim.Annotations[resourceapi.PodResourceClaimAnnotation] != "gpu" || claim.Annotations["note"] != "from-template" || claim.Labels["team"] != "a" {
		t.Errorf("annotations %v labels %v", claim.Annotations, claim.Labels)
	}
	want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	if !slices.EqualFunc(claim.OwnerReferences, want, func(a, b metav1.OwnerReference) bool {
		return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
			ptr.Deref(a.Controller, false) == ptr.Deref(b.Controller, false) && a.BlockOwnerDeletion == nil
	}) {
		t.Errorf("ownerReferences %+v, want %+v", claim.OwnerReferences, want)
	}
	if got := claim.Spec.Devices.Requests; len(got) != 1 || got[0].Exactly == nil || got[0].Exactly.DeviceClassName != "gpu.example.com" {
		t.Errorf("spec %+v, want the template's", claim.Spec)
	}
	p, err := n.Client.CoreV1().Pods(n.Name).Get(n.Ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var manager string
	for _, f := range p.ManagedFields {
		if f.Subresource == "status" && f.Operation == metav1.ManagedFieldsOperationApply {
			manager = f.Manager
		}
	}
	if manager != "ResourceClaimController" {
		t.Errorf("status applied by %q, want ResourceClaimController (managedFields %+v)", manager, p.ManagedFields)
	}
	// One claim, however often the pod is synced.
	framework.Update(n.T, timeout, n.Client.CoreV1().Pods(n.Name), pod.Name, func(p *v1.Pod) {
		p.Labels = map[string]string{"touched": "yes"}
	})
	framework.Consistently(t, 2*time.Second, "one claim for the pod", func() bool {
		list, err := n.Client.ResourceV1().ResourceClaims(n.Name).List(n.Ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1
	})
}

// TestLongNamesTruncated: a pod and claim name too long for one name are
// cut in proportion, as upstream cuts them.
func TestLongNamesTruncated(t *testing.T) {
	n := setup(t)
	createTemplate(n, "gpu-template")
	podName := strings.Repeat("p", 60)
	claimName := strings.Repeat("c", 40)
	pod := createPod(n, podName, claimName, fromTemplate("gpu-template"), "")
	claim := waitGenerated(n, pod, claimName)
	// 60+1+40+1 = 102 > 57: the pod part keeps 60*57/102 = 33, the claim
	// part 40*57/102 = 22, joined by one hyphen.
	prefix := strings.Repeat("p", 33) + "-" + strings.Repeat("c", 22)
	if !strings.HasPrefix(claim.Name, prefix) || len(claim.Name) != len(prefix)+5 {
		t.Errorf("claim name %q, want %q and five random characters", claim.Name, prefix)
	}
}

// TestMissingTemplate: a pod whose template does not exist gets a
// FailedResourceClaimCreation Event, and its claim once the template
// appears.
func TestMissingTemplate(t *testing.T) {
	n := setup(t)
	pod := createPod(n, "waiting", "gpu", fromTemplate("later"), "")
	ev := n.WaitEvents("Pod", "waiting", "FailedResourceClaimCreation", 1, timeout)[0]
	if ev.Type != v1.EventTypeWarning || ev.Source.Component != "resource_claim" ||
		!strings.HasPrefix(ev.Message, `PodResourceClaim gpu: resource claim template "later": `) {
		t.Errorf("event %s %q from %q", ev.Type, ev.Message, ev.Source.Component)
	}
	createTemplate(n, "later")
	waitGenerated(n, pod, "gpu")
}

// TestCollision: the claim the pod's status names belongs to someone else.
// As upstream, a pod whose status names a claim it does not own is not
// synced while that claim exists (nothing is created, the foreign claim is
// not touched); once that claim is deleted the pod gets back the claim
// made for it from the template. (Upstream's sync, when something else
// queues the pod, would create a new claim instead; only its informer
// handler's filter keeps the pod out of the queue, as kcm's does.)
func TestCollision(t *testing.T) {
	n := setup(t)
	createTemplate(n, "gpu-template")
	claims := n.Client.ResourceV1().ResourceClaims(n.Name)
	foreign, err := claims.Create(n.Ctx, &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Labels: map[string]string{"owner": "someone"}},
		Spec:       claimSpec(),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := createPod(n, "clash", "gpu", fromTemplate("gpu-template"), "")
	own := waitGenerated(n, pod, "gpu")
	// Someone points the pod's status at the foreign claim.
	if _, err := n.Client.CoreV1().Pods(n.Name).ApplyStatus(n.Ctx, podStatusApply(pod, "gpu", foreign.Name), metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 3*time.Second, "the pod left alone while the foreign claim exists", func() bool {
		list, err := claims.List(n.Ctx, metav1.ListOptions{})
		p, perr := n.Client.CoreV1().Pods(n.Name).Get(n.Ctx, pod.Name, metav1.GetOptions{})
		return err == nil && perr == nil && len(list.Items) == 2 &&
			len(p.Status.ResourceClaimStatuses) == 1 && ptr.Deref(p.Status.ResourceClaimStatuses[0].ResourceClaimName, "") == foreign.Name
	})
	got, err := claims.Get(n.Ctx, foreign.Name, metav1.GetOptions{})
	if err != nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Fatalf("foreign claim changed: %+v %v", got, err)
	}
	if err := claims.Delete(n.Ctx, foreign.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Until(t, timeout, "the pod's status names its own claim again", func() (bool, any) {
		p, err := n.Client.CoreV1().Pods(n.Name).Get(n.Ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(p.Status.ResourceClaimStatuses) == 1 && ptr.Deref(p.Status.ResourceClaimStatuses[0].ResourceClaimName, "") == own.Name, p.Status.ResourceClaimStatuses
	})
	if list, err := claims.List(n.Ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Errorf("claims %v %v, want only %s", list, err, own.Name)
	}
}

// TestReservedForBoundPod: an allocated claim of a pod bound without the
// scheduler is reserved for it.
func TestReservedForBoundPod(t *testing.T) {
	n := setup(t)
	claims := n.Client.ResourceV1().ResourceClaims(n.Name)
	claim, err := claims.Create(n.Ctx, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: claimSpec()}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allocate(n, claim)
	pod := createPod(n, "bound", "gpu", v1.PodResourceClaim{ResourceClaimName: ptr.To("shared")}, "node-1")
	framework.WaitFor(t, timeout, claims, "shared", "reserved for the bound pod", func(c *resourceapi.ResourceClaim) bool {
		return slices.Contains(c.Status.ReservedFor, podRef(pod))
	})
}

// TestSharedClaimReleased: a claim shared by two pods keeps its allocation
// while one still runs; when the other finishes too the reservation,
// allocation and delete-protection finalizer go, and the user's claim
// stays.
func TestSharedClaimReleased(t *testing.T) {
	n := setup(t)
	claims := n.Client.ResourceV1().ResourceClaims(n.Name)
	claim, err := claims.Create(n.Ctx, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: claimSpec()}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shared := v1.PodResourceClaim{ResourceClaimName: ptr.To("shared")}
	a := createPod(n, "a", "gpu", shared, "node-1")
	b := createPod(n, "b", "gpu", shared, "node-1")
	allocate(n, claim, podRef(a), podRef(b))

	setPhase(n, a.Name, v1.PodSucceeded)
	framework.WaitFor(t, timeout, claims, "shared", "reserved for b only", func(c *resourceapi.ResourceClaim) bool {
		return slices.Equal(c.Status.ReservedFor, []resourceapi.ResourceClaimConsumerReference{podRef(b)}) && c.Status.Allocation != nil
	})
	setPhase(n, b.Name, v1.PodFailed)
	framework.WaitFor(t, timeout, claims, "shared", "released, deallocated, unprotected", func(c *resourceapi.ResourceClaim) bool {
		return len(c.Status.ReservedFor) == 0 && c.Status.Allocation == nil && !slices.Contains(c.Finalizers, resourceapi.Finalizer)
	})
	framework.Consistently(t, time.Second, "the user's claim stays", func() bool {
		_, err := claims.Get(n.Ctx, "shared", metav1.GetOptions{})
		return err == nil
	})
}

// TestFinishedPodClaimDeleted: the generated claim of a finished pod is
// released, deallocated and deleted before the pod itself goes.
func TestFinishedPodClaimDeleted(t *testing.T) {
	n := setup(t)
	createTemplate(n, "gpu-template")
	pod := createPod(n, "job-1", "gpu", fromTemplate("gpu-template"), "node-1")
	claim := waitGenerated(n, pod, "gpu")
	allocate(n, claim, podRef(pod))
	setPhase(n, pod.Name, v1.PodSucceeded)
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := n.Client.ResourceV1().ResourceClaims(n.Name).Get(n.Ctx, claim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// TestDeletedPodReleases: a pod deleted while its claim is reserved frees
// the claim; a deleted claim nobody reserves loses its finalizer and goes.
func TestDeletedPodReleases(t *testing.T) {
	n := setup(t)
	claims := n.Client.ResourceV1().ResourceClaims(n.Name)
	claim, err := claims.Create(n.Ctx, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "user-claim"}, Spec: claimSpec()}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := createPod(n, "gone", "gpu", v1.PodResourceClaim{ResourceClaimName: ptr.To("user-claim")}, "node-1")
	allocate(n, claim, podRef(pod))
	if err := n.Client.CoreV1().Pods(n.Name).Delete(n.Ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, timeout, claims, "user-claim", "released and deallocated", func(c *resourceapi.ResourceClaim) bool {
		return len(c.Status.ReservedFor) == 0 && c.Status.Allocation == nil && !slices.Contains(c.Finalizers, resourceapi.Finalizer)
	})

	// Allocated but never reserved, then deleted: the finalizer holds it
	// until the controller deallocates it.
	allocate(n, framework.Get(t, claims, "user-claim"))
	if err := claims.Delete(n.Ctx, "user-claim", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := claims.Get(n.Ctx, "user-claim", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func setPhase(n framework.Namespace, name string, phase v1.PodPhase) {
	n.T.Helper()
	pods := n.Client.CoreV1().Pods(n.Name)
	framework.Eventually(n.T, timeout, func() (bool, error) {
		p, err := pods.Get(n.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p.Status.Phase = phase
		_, err = pods.UpdateStatus(n.Ctx, p, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// podStatusApply is a status apply naming claimName as the claim of the
// pod's podClaim.
func podStatusApply(pod *v1.Pod, podClaim, claimName string) *corev1apply.PodApplyConfiguration {
	return corev1apply.Pod(pod.Name, pod.Namespace).WithStatus(corev1apply.PodStatus().WithResourceClaimStatuses(
		corev1apply.PodResourceClaimStatus().WithName(podClaim).WithResourceClaimName(claimName)))
}
