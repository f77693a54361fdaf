package devicetainteviction

import (
	"context"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var (
	t0        = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	taintTime = metav1.NewTime(t0.Add(-time.Minute))
)

const (
	testNS   = "ns"
	testNode = "node-1"
	driver   = "gpu.example.com"
	poolName = "node-1"
	taintKey = "example.com/broken"
)

// harness is a controller whose caches the test fills directly, on a
// fake clock and a fake clientset.
type harness struct {
	*Controller
	ctx      context.Context
	clock    *testingclock.FakeClock
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, Features{DeviceTaintRules: true})
}

func newHarnessWith(t *testing.T, features Features) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(t0)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	resource := factory.Resource().V1()
	c, err := NewController(ctx, Config{
		Name:     "device-taint-eviction-controller",
		Client:   client,
		Clock:    clk,
		Pods:     factory.Core().V1().Pods(),
		Claims:   resource.ResourceClaims(),
		Slices:   resource.ResourceSlices(),
		Rules:    resource.DeviceTaintRules(),
		Features: features,
		Workers:  1,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(100)
	c.recorder = rec
	t.Cleanup(c.queue.ShutDown)
	return &harness{Controller: c, ctx: ctx, clock: clk, client: client, factory: factory, recorder: rec}
}

func (h *harness) informer(obj runtime.Object) cache.SharedIndexInformer {
	switch obj.(type) {
	case *v1.Pod:
		return h.factory.Core().V1().Pods().Informer()
	case *resourceapi.ResourceClaim:
		return h.factory.Resource().V1().ResourceClaims().Informer()
	case *resourceapi.ResourceSlice:
		return h.factory.Resource().V1().ResourceSlices().Informer()
	case *resourceapi.DeviceTaintRule:
		return h.factory.Resource().V1().DeviceTaintRules().Informer()
	}
	panic("unexpected object")
}

// add puts objects into the caches, and pods and rules also into the
// fake API server (the controller reads pods and applies rule status
// there).
func (h *harness) add(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := h.informer(obj).GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
		switch obj.(type) {
		case *v1.Pod, *resourceapi.DeviceTaintRule:
			if err := h.client.Tracker().Add(obj); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// update replaces objects in the caches only.
func (h *harness) update(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := h.informer(obj).GetIndexer().Update(obj); err != nil {
			t.Fatal(err)
		}
	}
}

// remove deletes objects from the caches only.
func (h *harness) remove(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := h.informer(obj).GetIndexer().Delete(obj); err != nil {
			t.Fatal(err)
		}
	}
}

// events drains the recorded Events.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// queued drains the queue's ready items, sorted.
func (h *harness) queued() []string {
	var out []string
	for h.queue.Len() > 0 {
		key, _ := h.queue.Get()
		h.queue.Done(key)
		h.queue.Forget(key)
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// writes lists the verbs and resources of the fake client's write
// actions (and pod reads).
func (h *harness) writes() []string {
	var out []string
	for _, a := range h.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	h.client.ClearActions()
	return out
}

func taint(effect resourceapi.DeviceTaintEffect) resourceapi.DeviceTaint {
	return resourceapi.DeviceTaint{Key: taintKey, Value: "yes", Effect: effect, TimeAdded: &taintTime}
}

func device(name string, taints ...resourceapi.DeviceTaint) resourceapi.Device {
	return resourceapi.Device{Name: name, Taints: taints}
}

func slice(name string, generation int64, devices ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("slice-" + name)},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourceapi.ResourcePool{Name: poolName, Generation: generation, ResourceSliceCount: 1},
			NodeName: ptr.To(testNode),
			Devices:  devices,
		},
	}
}

func result(dev string, tolerations ...resourceapi.DeviceToleration) resourceapi.DeviceRequestAllocationResult {
	return resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: driver, Pool: poolName, Device: dev, Tolerations: tolerations}
}

func toleration(effect resourceapi.DeviceTaintEffect, seconds *int64) resourceapi.DeviceToleration {
	return resourceapi.DeviceToleration{Key: taintKey, Operator: resourceapi.DeviceTolerationOpExists, Effect: effect, TolerationSeconds: seconds}
}

// claim is an allocated claim reserved for the pods.
func claim(name string, results []resourceapi.DeviceRequestAllocationResult, pods ...*v1.Pod) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("claim-" + name)}}
	if results != nil {
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	}
	for _, p := range pods {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
	}
	return c
}

// pod is a pod bound to testNode that uses the named claims.
func pod(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("pod-" + name)},
		Spec: v1.PodSpec{
			NodeName:   testNode,
			Containers: []v1.Container{{Name: "c", Image: "img"}},
		},
	}
	for _, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: ptr.To(c)})
	}
	return p
}

func rule(name string, effect resourceapi.DeviceTaintEffect, device string) *resourceapi.DeviceTaintRule {
	r := &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("rule-" + name), Generation: 1},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To(driver), Pool: ptr.To(poolName)},
			Taint:          taint(effect),
		},
	}
	if device != "" {
		r.Spec.DeviceSelector.Device = ptr.To(device)
	}
	return r
}
