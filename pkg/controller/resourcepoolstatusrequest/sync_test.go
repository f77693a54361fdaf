package resourcepoolstatusrequest

import (
	"errors"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
)

func TestCounts(t *testing.T) {
	tainted := resourcev1.Device{Name: "t", Taints: []resourcev1.DeviceTaint{{Key: "k", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}
	ruled := resourcev1.Device{Name: "ruled"}
	f := newFixture(t,
		request("r"),
		// pool a: generation 2 (two slices) replaces generation 1.
		slice("a-old", "a", "node-1", 1, 1, devices("old-1", "old-2", "old-3")...),
		slice("a-1", "a", "node-1", 2, 2, append(devices("d1", "d2"), tainted)...),
		slice("a-2", "a", "node-1", 2, 2, append(devices("d3"), ruled, resourcev1.Device{Name: "effect-none",
			Taints: []resourcev1.DeviceTaint{{Key: "k", Effect: resourcev1.DeviceTaintEffectNone}}})...),
		// pool b: two nodes.
		slice("b-1", "b", "node-1", 1, 2, devices("d1")...),
		slice("b-2", "b", "node-2", 1, 2, devices("d2")...),
		slice("other-driver", "a", "node-1", 1, 1),
		claim("c1", result("a", "d1"), result("a", "d2")),
		claim("c2", result("a", "d1")), // shared: counted once
		claim("admin", func() resourcev1.DeviceRequestAllocationResult {
			r := result("a", "d3")
			r.AdminAccess = ptr.To(true)
			return r
		}()),
		&resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "rule"}, Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(driver), Pool: ptr.To("a"), Device: ptr.To("ruled")},
			Taint:          resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNoExecute}}},
		&resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "no-selector"}, Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNoExecute}}},
	)
	st := f.status(t, "r")
	if *st.PoolCount != 2 || len(st.Pools) != 2 {
		t.Fatalf("poolCount %d, pools %+v; want 2", *st.PoolCount, st.Pools)
	}
	a, b := st.Pools[0], st.Pools[1]
	want := resourcev1alpha3.PoolStatus{Driver: driver, PoolName: "a", Generation: 2, NodeName: ptr.To("node-1"),
		ResourceSliceCount: ptr.To[int32](2), TotalDevices: ptr.To[int32](6), AllocatedDevices: ptr.To[int32](2),
		UnavailableDevices: ptr.To[int32](2), AvailableDevices: ptr.To[int32](2)}
	if !equalPool(a, want) {
		t.Errorf("pool a: %s\nwant %s", show(a), show(want))
	}
	if b.PoolName != "b" || b.NodeName != nil || *b.TotalDevices != 2 || *b.AllocatedDevices != 0 {
		t.Errorf("pool b: %s; want 2 devices, none allocated, no node", show(b))
	}
	c := st.Conditions
	if len(c) != 1 || c[0].Type != "Complete" || c[0].Status != metav1.ConditionTrue || c[0].Reason != "CalculationComplete" ||
		c[0].Message != "Calculated status for 2 pools" || !c[0].LastTransitionTime.Time.Equal(epoch) {
		t.Errorf("conditions %+v", c)
	}
}

func TestLimitAndFilter(t *testing.T) {
	var objs []runtime.Object
	for _, p := range []string{"p3", "p1", "p2"} {
		objs = append(objs, slice(p, p, "", 1, 1, devices("d")...))
	}
	objs = append(objs,
		request("limited", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Spec.Limit = ptr.To[int32](2) }),
		request("one", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Spec.PoolName = ptr.To("p2") }),
		request("none", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Spec.Driver = "other.example.com" }))
	f := newFixture(t, objs...)
	st := f.status(t, "limited")
	if *st.PoolCount != 3 || len(st.Pools) != 2 || st.Pools[0].PoolName != "p1" || st.Pools[1].PoolName != "p2" {
		t.Errorf("limited: poolCount %d, pools %v; want 3 and [p1 p2]", *st.PoolCount, names(st.Pools))
	}
	if st.Conditions[0].Message != "Calculated status for 2 pools" {
		t.Errorf("limited: message %q", st.Conditions[0].Message)
	}
	if st := f.status(t, "one"); *st.PoolCount != 1 || st.Pools[0].PoolName != "p2" {
		t.Errorf("one: poolCount %d, pools %v; want [p2]", *st.PoolCount, names(st.Pools))
	}
	if st := f.status(t, "none"); *st.PoolCount != 0 || len(st.Pools) != 0 || st.Conditions[0].Message != "Calculated status for 0 pools" {
		t.Errorf("none: %+v", st)
	}
}

func TestIncompletePoolRetried(t *testing.T) {
	f := newFixture(t, request("r"), slice("s1", "p", "n", 3, 2, devices("d")...))
	err := f.c.sync(f.ctx, "r")
	var retry controller.ExpectedRetry
	if !errors.As(err, &retry) {
		t.Fatalf("sync = %v, want an expected retry", err)
	}
	for _, a := range f.client.Actions() {
		t.Errorf("request %s %s/%s while a pool is incomplete", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
	}
	// The PoolIncomplete error itself, as the status would carry it.
	in, _ := f.c.gather(request("r"))
	st := in.poolStatuses(nil)
	if len(st) != 1 || st[0].ValidationError == nil || *st[0].ValidationError != "PoolIncomplete: pool gpu.example.com/p is incomplete: observed 1/2 slices at generation 3" ||
		st[0].TotalDevices != nil || st[0].ResourceSliceCount != nil {
		t.Errorf("incomplete pool status %s", show(st[0]))
	}
}

func TestAnsweredOnce(t *testing.T) {
	done := request("done")
	done.Status = &resourcev1alpha3.ResourcePoolStatusRequestStatus{PoolCount: ptr.To[int32](0)}
	f := newFixture(t, done)
	if err := f.c.sync(f.ctx, "done"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.sync(f.ctx, "missing"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("%d requests for an answered and a missing request", n)
	}
	f.c.requestChanged(klogFor(t), done)
	f.c.requestChanged(klogFor(t), request("new"))
	if n := f.c.queue.Len(); n != 1 {
		t.Errorf("%d requests queued, want only the unanswered one", n)
	}
}

func TestMetrics(t *testing.T) {
	const d = "metrics.example.com"
	r := request("m", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Spec.Driver = d })
	f := newFixture(t, r)
	f.client.PrependReactor("update", "resourcepoolstatusrequests", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is down")
	})
	if err := f.c.sync(f.ctx, "m"); err == nil {
		t.Fatal("no error from a failed status write")
	}
	f2 := newFixture(t, r)
	if err := f2.c.sync(f2.ctx, "m"); err != nil {
		t.Fatal(err)
	}
	processed, _ := testutil.GetCounterMetricValue(requestsProcessed.WithLabelValues(d))
	failed, _ := testutil.GetCounterMetricValue(requestErrors.WithLabelValues(d))
	observed, _ := testutil.GetHistogramMetricCount(requestDuration.WithLabelValues(d))
	if processed != 2 || failed != 1 || observed != 2 {
		t.Errorf("processed %v, errors %v, durations %v; want 2, 1, 2", processed, failed, observed)
	}
}
