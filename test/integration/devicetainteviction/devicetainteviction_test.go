// Package devicetainteviction tests the device-taint-eviction-controller
// against a real kube-apiserver. The test writes claim allocations itself,
// as the scheduler would. Nothing runs pods there, so an evicted pod
// bound to a node stays, with a deletionTimestamp, until the test
// force-deletes it; "evicted" below means "has a deletionTimestamp".
package devicetainteviction

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/devicetainteviction"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout  = 30 * time.Second
	node     = "node-1"
	pool     = "node-1"
	taintKey = "example.com/unhealthy"
)

// env is one test's controller, namespace and DRA driver (each test has
// its own driver, so that the cluster-scoped objects of tests do not
// meet).
type env struct {
	framework.Namespace
	driver string
}

// setup starts the controller through its real constructor, and creates
// a namespace and the DeviceClass of the test's driver.
func setup(t *testing.T, driver string) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "dte-")
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.DeviceTaintEvictionController.ConcurrentSyncs = 8
	c := framework.NewController(t, cc, names.DeviceTaintEviction, devicetainteviction.New)
	framework.StartController(t, cc, c)
	e := &env{Namespace: ns, driver: driver}
	framework.Create(t, e.Client.ResourceV1().DeviceClasses(), &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: driver},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`},
		}}},
	})
	t.Cleanup(e.cleanup)
	return e
}

// cleanup force-deletes the test's pods, so that later tests'
// controllers do not look at them again.
func (e *env) cleanup() {
	_ = e.Client.CoreV1().Pods(e.Name).DeleteCollection(context.Background(),
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
}

// createSlice publishes the driver's pool on node: devices gpu-0 and
// gpu-1, gpu-0 with the given taints. The API server sets their timeAdded.
func (e *env) createSlice(taints ...resourceapi.DeviceTaint) *resourceapi.ResourceSlice {
	e.T.Helper()
	return framework.Create(e.T, e.Client.ResourceV1().ResourceSlices(), &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: e.driver + "-" + pool},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   e.driver,
			Pool:     resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  []resourceapi.Device{{Name: "gpu-0", Taints: taints}, {Name: "gpu-1"}},
		},
	})
}

// setSliceTaints replaces gpu-0's taints.
func (e *env) setSliceTaints(taints ...resourceapi.DeviceTaint) {
	e.T.Helper()
	framework.Update(e.T, timeout, e.Client.ResourceV1().ResourceSlices(), e.driver+"-"+pool, func(s *resourceapi.ResourceSlice) {
		s.Spec.Devices[0].Taints = taints
	})
}

// createPod creates a pod bound to node that uses the claim of its name.
func (e *env) createPod(name string) *v1.Pod {
	e.T.Helper()
	return framework.Create(e.T, e.Client.CoreV1().Pods(e.Name), &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []v1.Container{{Name: "c", Image: "registry.example/gpu:1",
				Resources: v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(name)}},
		},
	})
}

// createAllocatedClaim creates the pod's claim and allocates gpu-0 to it,
// with the tolerations, reserved for the pod, as the scheduler would.
func (e *env) createAllocatedClaim(pod *v1.Pod, tolerations ...resourceapi.DeviceToleration) {
	e.T.Helper()
	claims := e.Client.ResourceV1().ResourceClaims(e.Name)
	claim := framework.Create(e.T, claims, &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Finalizers: []string{resourceapi.Finalizer}},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name:    "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: e.driver, Tolerations: tolerations},
		}}}},
	})
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
		Request: "gpu", Driver: e.driver, Pool: pool, Device: "gpu-0", Tolerations: tolerations,
	}}}}
	claim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	if _, err := claims.UpdateStatus(e.Ctx, claim, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		// Let the claim go: nothing else removes the finalizer here.
		_, _ = claims.Patch(context.Background(), claim.Name, "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
}

// evicted reports whether the pod is terminating (or gone).
func (e *env) evicted(name string) (bool, error) {
	pod, err := e.Client.CoreV1().Pods(e.Name).Get(e.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return pod.DeletionTimestamp != nil, nil
}

// waitEvicted waits for the pod's eviction and checks its
// DisruptionTarget condition and Event.
func (e *env) waitEvicted(name string) *v1.Pod {
	e.T.Helper()
	pod := framework.WaitFor(e.T, timeout, e.Client.CoreV1().Pods(e.Name), name, "pod "+name+" evicted",
		func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	var cond *v1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.DisruptionTarget {
			cond = &pod.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason != "DeletionByDeviceTaintManager" ||
		cond.Message != "Device Taint manager: deleting due to NoExecute taint" {
		e.T.Errorf("pod %s: DisruptionTarget condition %+v", name, cond)
	}
	events := e.WaitEvents("Pod", name, "DeviceTaintManagerEviction", 1, timeout)
	if ev := events[0]; ev.Message != "Marking for deletion" || ev.Type != v1.EventTypeNormal ||
		ev.Source.Component != names.DeviceTaintEviction || ev.InvolvedObject.UID != pod.UID {
		e.T.Errorf("pod %s: Event %s %q from %q about %s", name, ev.Type, ev.Message, ev.Source.Component, ev.InvolvedObject.UID)
	}
	return pod
}

func noExecute() resourceapi.DeviceTaint {
	return resourceapi.DeviceTaint{Key: taintKey, Value: "true", Effect: resourceapi.DeviceTaintEffectNoExecute}
}

func tolerateFor(seconds int64) resourceapi.DeviceToleration {
	return resourceapi.DeviceToleration{Key: taintKey, Operator: resourceapi.DeviceTolerationOpExists,
		Effect: resourceapi.DeviceTaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)}
}

// TestSliceTaintEvicts: a pod whose allocated device has an untolerated
// NoExecute taint in its ResourceSlice is evicted: DisruptionTarget
// condition, Event, deletion. A pod on an untainted device of the same
// slice, and a pod tolerating the taint forever, stay.
func TestSliceTaintEvicts(t *testing.T) {
	e := setup(t, "slice.example.com")
	e.createSlice(noExecute())
	tolerant := e.createPod("tolerant")
	e.createAllocatedClaim(tolerant, resourceapi.DeviceToleration{Key: taintKey, Operator: resourceapi.DeviceTolerationOpExists,
		Effect: resourceapi.DeviceTaintEffectNoExecute})
	victim := e.createPod("victim")
	e.createAllocatedClaim(victim)

	e.waitEvicted("victim")
	if gone, err := e.evicted("tolerant"); err != nil || gone {
		t.Errorf("pod tolerating the taint forever evicted (err %v)", err)
	}
}

// TestTolerationSeconds: a pod whose claim tolerates the taint for a while
// is evicted once that time has passed since the taint's timeAdded, not
// before.
func TestTolerationSeconds(t *testing.T) {
	e := setup(t, "seconds.example.com")
	const seconds = 6
	slice := e.createSlice(noExecute())
	added := slice.Spec.Devices[0].Taints[0].TimeAdded
	if added == nil {
		t.Fatal("the API server did not set the taint's timeAdded")
	}
	due := added.Add(seconds * time.Second)
	pod := e.createPod("p")
	e.createAllocatedClaim(pod, tolerateFor(seconds))

	// timeAdded has whole seconds: the deadline may come up to a second
	// before added+seconds by the wall clock.
	framework.Consistently(t, time.Until(due.Add(-time.Second)), "pod not evicted before its toleration ran out", func() bool {
		gone, err := e.evicted("p")
		return err == nil && !gone
	})
	e.waitEvicted("p")
}

// TestTaintRemovedBeforeDeadline: a taint the pod tolerates for a while
// that goes before that time is up cancels the eviction, with upstream's
// Event, and the pod stays.
func TestTaintRemovedBeforeDeadline(t *testing.T) {
	e := setup(t, "removed.example.com")
	const seconds = 6
	slice := e.createSlice(noExecute())
	added := slice.Spec.Devices[0].Taints[0].TimeAdded.Time
	due := added.Add(seconds * time.Second)
	pod := e.createPod("p")
	e.createAllocatedClaim(pod, tolerateFor(seconds))

	// The taint stays half the toleration, then goes.
	notEvicted := func() bool {
		gone, err := e.evicted("p")
		return err == nil && !gone
	}
	framework.Consistently(t, time.Until(added.Add(seconds/2*time.Second)), "pod not evicted while it tolerates the taint", notEvicted)
	e.setSliceTaints()
	events := e.WaitEvents("Pod", "p", "DeviceTaintManagerEviction", 1, timeout)
	if ev := events[0]; ev.Message != "Cancelling deletion" || ev.InvolvedObject.UID != pod.UID {
		t.Errorf("Event %q about %s, want \"Cancelling deletion\" about %s", ev.Message, ev.InvolvedObject.UID, pod.UID)
	}
	framework.Consistently(t, time.Until(due.Add(2*time.Second)), "pod not evicted after its taint went", notEvicted)
}

// ruleCondition returns the rule's EvictionInProgress condition.
func ruleCondition(r *resourceapi.DeviceTaintRule) *metav1.Condition {
	for i := range r.Status.Conditions {
		if r.Status.Conditions[i].Type == resourceapi.DeviceTaintConditionEvictionInProgress {
			return &r.Status.Conditions[i]
		}
	}
	return nil
}

// TestDeviceTaintRule: a NoExecute DeviceTaintRule selecting the device
// evicts the pod, and its EvictionInProgress condition ends as upstream's
// Completed with the count of evicted pods, written by server-side apply
// under the controller's name. A None rule reports what it would do.
func TestDeviceTaintRule(t *testing.T) {
	e := setup(t, "rule.example.com")
	e.createSlice()
	pod := e.createPod("p")
	e.createAllocatedClaim(pod)
	rules := e.Client.ResourceV1().DeviceTaintRules()

	framework.Create(t, rules, &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "rule-none"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To(e.driver)},
			Taint:          resourceapi.DeviceTaint{Key: taintKey, Effect: resourceapi.DeviceTaintEffectNone},
		},
	})
	t.Cleanup(func() { _ = rules.Delete(context.Background(), "rule-none", metav1.DeleteOptions{}) })
	r := framework.WaitFor(t, timeout, rules, "rule-none", "None rule's condition", func(r *resourceapi.DeviceTaintRule) bool {
		return ruleCondition(r) != nil
	})
	want := "2 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace " +
		"if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update."
	if c := ruleCondition(r); c.Status != metav1.ConditionFalse || c.Reason != "NoEffect" || c.Message != want || c.ObservedGeneration != 1 {
		t.Errorf("None rule: condition %+v", c)
	}
	if gone, err := e.evicted("p"); err != nil || gone {
		t.Fatalf("pod evicted by a None rule (err %v)", err)
	}

	framework.Create(t, rules, &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "rule-evict"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To(e.driver), Pool: ptr.To(pool), Device: ptr.To("gpu-0")},
			Taint:          noExecute(),
		},
	})
	t.Cleanup(func() { _ = rules.Delete(context.Background(), "rule-evict", metav1.DeleteOptions{}) })
	e.waitEvicted("p")

	// Status updates are at least 10s apart while the eviction goes on.
	r = framework.WaitFor(t, timeout, rules, "rule-evict", "rule's condition Completed", func(r *resourceapi.DeviceTaintRule) bool {
		c := ruleCondition(r)
		return c != nil && c.Reason == "Completed"
	})
	if c := ruleCondition(r); c.Status != metav1.ConditionFalse || c.Message != "1 pod evicted since starting the controller." || c.ObservedGeneration != 1 {
		t.Errorf("NoExecute rule: condition %+v", c)
	}
	var managers []string
	for _, m := range r.ManagedFields {
		if m.Subresource == "status" {
			managers = append(managers, string(m.Operation)+" "+m.Manager)
		}
	}
	if strings.Join(managers, ",") != "Apply "+names.DeviceTaintEviction {
		t.Errorf("status managed by %q, want Apply %s", managers, names.DeviceTaintEviction)
	}
}
