// Package resourcepoolstatusrequest tests the
// resourcepoolstatusrequest-controller against a real kube-apiserver,
// built through kcm's registry as the binary builds it, on a fake clock
// that skips the retention periods.
package resourcepoolstatusrequest

import (
	"context"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout = 30 * time.Second
	driver  = "gpu.rpsr.example.com"
)

// build runs kcm's registry entry of the controller through
// controllermanager.Build with --controllers=* and DRAResourcePoolStatus
// as given, on clk.
func build(t *testing.T, cfg *rest.Config, gate bool, clk *testingclock.FakeClock) (*controllermanager.ControllerContext, []controllermanager.Controller) {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := features.AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(map[string]bool{string(features.DRAResourcePoolStatus): gate}); err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.FeatureGate = fg
	if clk != nil {
		cc.Clock = clk
	}
	reg := controllermanager.Registry{names.ResourcePoolStatusRequest: app.NewRegistry()[names.ResourcePoolStatusRequest]}
	ctrls, err := controllermanager.Build(context.Background(), cc, cc, reg, []string{"*"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cc, ctrls
}

func TestGate(t *testing.T) {
	cfg := framework.StartEnv(t)
	if _, ctrls := build(t, cfg, false, nil); len(ctrls) != 0 {
		t.Errorf("DRAResourcePoolStatus off: built %d controllers, want none", len(ctrls))
	}
	_, ctrls := build(t, cfg, true, nil)
	if len(ctrls) != 1 || ctrls[0].Name() != names.ResourcePoolStatusRequest {
		t.Fatalf("DRAResourcePoolStatus on: built %v, want the %s", ctrls, names.ResourcePoolStatusRequest)
	}
}

func partition(name, profile, memory string) resourcev1.Device {
	return resourcev1.Device{Name: name,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"profile": {StringValue: ptr.To(profile)}},
		ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: "gpu-0",
			Counters: map[string]resourcev1.Counter{"memory": {Value: resource.MustParse(memory)}}}}}
}

// setUp publishes the driver's pools and allocates one device:
//
//   - "node-a": two slices on node-a, five devices, one tainted NoSchedule
//     by the driver and one by a DeviceTaintRule, one allocated;
//   - "gpu": a counter slice (80Gi) and a partition slice (one Full of
//     80Gi, two Half of 40Gi), one Half allocated;
//   - "late" and "never": one of their two slices only.
func setUp(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	slices := client.ResourceV1().ResourceSlices()
	pool := func(name string, count int64) resourcev1.ResourcePool {
		return resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: count}
	}
	for _, s := range []*resourcev1.ResourceSlice{
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-node-a-1"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("node-a", 2), NodeName: ptr.To("node-a"),
			Devices: []resourcev1.Device{{Name: "d1"}, {Name: "d2"}, {Name: "tainted",
				Taints: []resourcev1.DeviceTaint{{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-node-a-2"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("node-a", 2), NodeName: ptr.To("node-a"),
			Devices: []resourcev1.Device{{Name: "d3"}, {Name: "ruled"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-gpu-counters"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("gpu", 2), NodeName: ptr.To("node-b"),
			SharedCounters: []resourcev1.CounterSet{{Name: "gpu-0", Counters: map[string]resourcev1.Counter{"memory": {Value: resource.MustParse("80Gi")}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-gpu-partitions"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("gpu", 2), NodeName: ptr.To("node-b"),
			PartitionTypeAttribute: ptr.To(resourcev1.FullyQualifiedName(driver + "/profile")),
			Devices:                []resourcev1.Device{partition("full-0", "Full", "80Gi"), partition("half-0", "Half", "40Gi"), partition("half-1", "Half", "40Gi")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-late-1"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("late", 2), AllNodes: ptr.To(true),
			Devices: []resourcev1.Device{{Name: "l1"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-never-1"}, Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: pool("never", 2), AllNodes: ptr.To(true),
			Devices: []resourcev1.Device{{Name: "n1"}}}},
	} {
		framework.Create(t, slices, s)
	}
	framework.Create(t, client.ResourceV1().DeviceTaintRules(), &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-ruled"},
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(driver), Pool: ptr.To("node-a"), Device: ptr.To("ruled")},
			Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Effect: resourcev1.DeviceTaintEffectNoSchedule}}})

	claims := client.ResourceV1().ResourceClaims(ns)
	c := framework.Create(t, claims, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "two"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "plain", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "plain"}},
			{Name: "half", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "half"}},
		}}}})
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "plain", Driver: driver, Pool: "node-a", Device: "d1"},
		{Request: "half", Driver: driver, Pool: "gpu", Device: "half-0"},
	}}}
	if _, err := claims.UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestRequestsAnsweredAndExpired(t *testing.T) {
	cfg, ns := framework.Setup(t, "rpsr-")
	client := ns.Client
	setUp(t, client, ns.Name)
	clk := testingclock.NewFakeClock(time.Now())
	cc, ctrls := build(t, cfg, true, clk)
	if len(ctrls) != 1 {
		t.Fatalf("built %d controllers, want 1", len(ctrls))
	}
	requests := client.ResourceV1alpha3().ResourcePoolStatusRequests()
	create := func(name string, spec resourcev1alpha3.ResourcePoolStatusRequestSpec) {
		framework.Create(t, requests, &resourcev1alpha3.ResourcePoolStatusRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	answered := func(r *resourcev1alpha3.ResourcePoolStatusRequest) bool { return r.Status != nil }
	create("node-a", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver, PoolName: ptr.To("node-a")})
	create("gpu", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver, PoolName: ptr.To("gpu")})
	create("all", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver, Limit: ptr.To[int32](1)})
	framework.StartController(t, cc, ctrls[0])

	// Pool node-a: 5 devices, d1 allocated, two tainted.
	r := framework.WaitFor(t, timeout, requests, "node-a", "request answered", answered)
	want := resourcev1alpha3.PoolStatus{Driver: driver, PoolName: "node-a", Generation: 1, NodeName: ptr.To("node-a"),
		ResourceSliceCount: ptr.To[int32](2), TotalDevices: ptr.To[int32](5), AllocatedDevices: ptr.To[int32](1),
		AvailableDevices: ptr.To[int32](2), UnavailableDevices: ptr.To[int32](2)}
	if got := r.Status; *got.PoolCount != 1 || len(got.Pools) != 1 || !equalJSON(got.Pools[0], want) {
		t.Errorf("node-a: poolCount %d, pools %s\nwant %s", *got.PoolCount, toJSON(got.Pools), toJSON(want))
	}
	if c := r.Status.Conditions; len(c) != 1 || c[0].Type != "Complete" || c[0].Status != metav1.ConditionTrue ||
		c[0].Reason != "CalculationComplete" || c[0].Message != "Calculated status for 1 pools" {
		t.Errorf("node-a: conditions %+v", c)
	}

	// Pool gpu: half-0 holds 40Gi of 80Gi, so one Half fits and no Full.
	r = framework.WaitFor(t, timeout, requests, "gpu", "request answered", answered)
	wantPartitions := []resourcev1alpha3.PartitionTypeStatus{
		{Attribute: driver + "/profile", Type: "Full", Total: ptr.To[int32](1), Allocatable: ptr.To[int32](0)},
		{Attribute: driver + "/profile", Type: "Half", Total: ptr.To[int32](2), Allocatable: ptr.To[int32](1)},
	}
	if p := r.Status.Pools; len(p) != 1 || p[0].ValidationError != nil || !equalJSON(p[0].PartitionSummary, wantPartitions) {
		t.Errorf("gpu: pools %s\nwant partitionSummary %s", toJSON(p), toJSON(wantPartitions))
	}

	// Pool late is incomplete. A request over all pools with limit 1 is
	// answered all the same: only the returned pools (gpu) are checked,
	// as upstream does. A request naming late is not answered.
	r = framework.WaitFor(t, timeout, requests, "all", "request answered", answered)
	if p := r.Status.Pools; *r.Status.PoolCount != 4 || len(p) != 1 || p[0].PoolName != "gpu" {
		t.Errorf("all, limit 1: poolCount %d, pools %s; want 4 and gpu only", *r.Status.PoolCount, toJSON(p))
	}
	create("late", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver, PoolName: ptr.To("late")})
	framework.Consistently(t, 3*time.Second, "request on an incomplete pool unanswered", func() bool {
		r, err := requests.Get(context.Background(), "late", metav1.GetOptions{})
		return err == nil && r.Status == nil
	})
	// Once the driver published the rest, an update of the request gets
	// it answered.
	framework.Create(t, client.ResourceV1().ResourceSlices(), &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-late-2"},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: resourcev1.ResourcePool{Name: "late", Generation: 1, ResourceSliceCount: 2},
			AllNodes: ptr.To(true), Devices: []resourcev1.Device{{Name: "l2"}}}})
	framework.Update(t, timeout, requests, "late", func(r *resourcev1alpha3.ResourcePoolStatusRequest) {
		r.Labels = map[string]string{"retry": "1"}
	})
	r = framework.WaitFor(t, timeout, requests, "late", "request answered", answered)
	if p := r.Status.Pools; len(p) != 1 || *p[0].TotalDevices != 2 || p[0].NodeName != nil {
		t.Errorf("late: pools %s; want 2 devices, no node", toJSON(p))
	}

	// An answered request is not recomputed.
	before := framework.Get(t, requests, "node-a")
	framework.Create(t, client.ResourceV1().ResourceSlices(), &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "rpsr-extra"},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: resourcev1.ResourcePool{Name: "extra", Generation: 1, ResourceSliceCount: 1},
			AllNodes: ptr.To(true), Devices: []resourcev1.Device{{Name: "x"}}}})
	framework.Update(t, timeout, requests, "node-a", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Labels = map[string]string{"touched": "1"} })
	framework.Consistently(t, 2*time.Second, "answered request left alone", func() bool {
		r, err := requests.Get(context.Background(), "node-a", metav1.GetOptions{})
		return err == nil && equalJSON(r.Status, before.Status)
	})

	// An hour after their answer, answered requests are deleted; a
	// pending one stays until a day after its creation.
	create("pending", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver, PoolName: ptr.To("never")})
	framework.Until(t, timeout, "the cleanup ticker", func() (bool, any) { return clk.HasWaiters(), nil })
	clk.Step(61 * time.Minute)
	for _, name := range []string{"node-a", "gpu", "all", "late"} {
		gone(t, requests, name)
	}
	if r := framework.Get(t, requests, "pending"); r.Status != nil {
		t.Errorf("pending request answered: %s", toJSON(r.Status))
	}
	clk.Step(24 * time.Hour)
	gone(t, requests, "pending")
}

func gone(t *testing.T, c framework.Getter[*resourcev1alpha3.ResourcePoolStatusRequest], name string) {
	t.Helper()
	framework.Until(t, timeout, name+" deleted", func() (bool, any) {
		_, err := c.Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}
