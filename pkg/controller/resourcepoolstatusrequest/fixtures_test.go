package resourcepoolstatusrequest

import (
	"context"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const driver = "gpu.example.com"

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// slice is a ResourceSlice of driver's pool at generation gen, one of
// count, on node (none if ""), with devices.
func slice(name, pool, node string, gen, count int64, devices ...resourcev1.Device) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
		Driver: driver, Pool: resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: count}, Devices: devices}}
	if node != "" {
		s.Spec.NodeName = ptr.To(node)
	} else {
		s.Spec.AllNodes = ptr.To(true)
	}
	return s
}

func devices(names ...string) []resourcev1.Device {
	var out []resourcev1.Device
	for _, n := range names {
		out = append(out, resourcev1.Device{Name: n})
	}
	return out
}

// claim is an allocated claim holding the devices (as "pool/device").
func claim(name string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}}}
}

func result(pool, device string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: driver, Pool: pool, Device: device}
}

func request(name string, mutate ...func(*resourcev1alpha3.ResourcePoolStatusRequest)) *resourcev1alpha3.ResourcePoolStatusRequest {
	r := &resourcev1alpha3.ResourcePoolStatusRequest{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: driver}}
	for _, m := range mutate {
		m(r)
	}
	return r
}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

type fixture struct {
	c      *Controller
	client *fake.Clientset
	clock  *testingclock.FakeClock
	ctx    context.Context
}

// newFixture builds a controller whose caches hold objs (and its fake
// client the requests among them).
func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	var requests []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*resourcev1alpha3.ResourcePoolStatusRequest); ok {
			requests = append(requests, o)
		}
	}
	client := fake.NewClientset(requests...)
	f := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(epoch)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, clk, f, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *resourcev1alpha3.ResourcePoolStatusRequest:
			err = f.Resource().V1alpha3().ResourcePoolStatusRequests().Informer().GetIndexer().Add(o)
		case *resourcev1.ResourceSlice:
			err = f.Resource().V1().ResourceSlices().Informer().GetIndexer().Add(o)
		case *resourcev1.ResourceClaim:
			err = f.Resource().V1().ResourceClaims().Informer().GetIndexer().Add(o)
		case *resourcev1.DeviceTaintRule:
			err = f.Resource().V1().DeviceTaintRules().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	return &fixture{c: c, client: client, clock: clk, ctx: ctx}
}

// status syncs the request and returns its status as written.
func (f *fixture) status(t *testing.T, name string) *resourcev1alpha3.ResourcePoolStatusRequestStatus {
	t.Helper()
	if err := f.c.sync(f.ctx, name); err != nil {
		t.Fatal(err)
	}
	r, err := f.client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status == nil {
		t.Fatal("no status written")
	}
	return r.Status
}
