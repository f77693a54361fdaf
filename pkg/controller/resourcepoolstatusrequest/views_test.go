package resourcepoolstatusrequest

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// partition is a device of partition type typ (attribute "profile",
// stored without the driver's domain) consuming mem from counter set
// "gpu-0".
func partition(name, typ, mem string) resourcev1.Device {
	return resourcev1.Device{Name: name,
		Attributes:       map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"profile": {StringValue: ptr.To(typ)}},
		ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: "gpu-0", Counters: map[string]resourcev1.Counter{"memory": {Value: qty(mem)}}}}}
}

func partitionedSlice(declare bool, devs ...resourcev1.Device) *resourcev1.ResourceSlice {
	s := slice("s", "p", "n", 1, 1, devs...)
	s.Spec.SharedCounters = []resourcev1.CounterSet{{Name: "gpu-0", Counters: map[string]resourcev1.Counter{"memory": {Value: qty("40Gi")}}}}
	if declare {
		s.Spec.PartitionTypeAttribute = ptr.To(resourcev1.FullyQualifiedName(driver + "/profile"))
	}
	return s
}

func TestPartitionSummary(t *testing.T) {
	// A 40Gi GPU offered whole or as halves and quarters; one half is
	// allocated, so 20Gi is left: no whole, one half, two quarters.
	devs := []resourcev1.Device{partition("whole", "1g", "40Gi"), partition("half-0", "2h", "20Gi"),
		partition("half-1", "2h", "20Gi"), partition("q-0", "4q", "10Gi"), partition("q-1", "4q", "10Gi"),
		partition("q-2", "4q", "10Gi"), partition("q-3", "4q", "10Gi"), {Name: "plain"}}
	attr := driver + "/profile"
	want := []resourcev1alpha3.PartitionTypeStatus{
		{Attribute: attr, Type: "1g", Total: ptr.To[int32](1), Allocatable: ptr.To[int32](0)},
		{Attribute: attr, Type: "2h", Total: ptr.To[int32](2), Allocatable: ptr.To[int32](1)},
		{Attribute: attr, Type: "4q", Total: ptr.To[int32](4), Allocatable: ptr.To[int32](2)},
	}
	for _, tt := range []struct {
		name     string
		declared bool
		req      *string
		want     []resourcev1alpha3.PartitionTypeStatus
	}{
		{name: "declared by the slice", declared: true, want: want},
		{name: "request default", req: ptr.To(attr), want: want},
		{name: "neither: no summary"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, request("r", func(r *resourcev1alpha3.ResourcePoolStatusRequest) { r.Spec.DefaultPartitionTypeAttribute = tt.req }),
				partitionedSlice(tt.declared, devs...), claim("c", result("p", "half-0")))
			p := f.status(t, "r").Pools[0]
			if p.ValidationError != nil {
				t.Fatalf("validation error %q", *p.ValidationError)
			}
			if show(p.PartitionSummary) != show(tt.want) {
				t.Errorf("partitionSummary %s\nwant %s", show(p.PartitionSummary), show(tt.want))
			}
		})
	}
}

func TestViewProblems(t *testing.T) {
	noCounters := partitionedSlice(true, partition("a", "x", "1Gi"))
	noCounters.Spec.SharedCounters = nil
	untyped := partition("b", "x", "1Gi")
	untyped.Attributes = nil
	many := partitionedSlice(true)
	for i := range 33 {
		many.Spec.Devices = append(many.Spec.Devices, partition("d"+strings.Repeat("x", i), "t"+strings.Repeat("x", i), "1Mi"))
	}
	for _, tt := range []struct {
		name  string
		slice *resourcev1.ResourceSlice
		want  string
	}{
		{name: "no shared counters", slice: noCounters,
			want: "PartitionTypeMissing: pool gpu.example.com/p declares partitionTypeAttribute but publishes no sharedCounters"},
		{name: "device without the attribute", slice: partitionedSlice(true, partition("a", "x", "1Gi"), untyped),
			want: `PartitionTypeMissing: device "b" in pool gpu.example.com/p does not carry partition type attribute "gpu.example.com/profile"`},
		{name: "costs differ", slice: partitionedSlice(true, partition("a", "x", "1Gi"), partition("b", "x", "2Gi")),
			want: `PartitionCostMismatch: devices of partition type "x" in pool gpu.example.com/p consume different counters`},
		{name: "too many types", slice: many,
			want: "PartitionSummaryOverCap: pool gpu.example.com/p has 33 partition types, exceeding the maximum of 32"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, request("r"), tt.slice)
			st := f.status(t, "r")
			p := st.Pools[0]
			if p.ValidationError == nil || *p.ValidationError != tt.want {
				t.Errorf("validation error %v, want %q", p.ValidationError, tt.want)
			}
			if p.PartitionSummary != nil || p.TotalDevices == nil {
				t.Errorf("pool %s: want counts and no partition summary", show(p))
			}
			if st.Conditions[0].Message != "Calculated status for 1 pools (1 incomplete)" {
				t.Errorf("message %q", st.Conditions[0].Message)
			}
		})
	}
}

func TestShareableSummary(t *testing.T) {
	shareable := func(name, bw string) resourcev1.Device {
		return resourcev1.Device{Name: name, AllowMultipleAllocations: ptr.To(true),
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"bandwidth": {Value: qty(bw)}, "memory": {Value: qty("1Gi")}}}
	}
	used := result("p", "nic-0")
	used.ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"bandwidth": qty("3G")}
	over := result("p", "nic-0")
	over.ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"memory": qty("5Gi")}
	f := newFixture(t, request("r"), slice("s", "p", "n", 1, 1, shareable("nic-0", "10G"), shareable("nic-1", "10G"), resourcev1.Device{Name: "plain"}),
		claim("a", used), claim("b", over))
	got := f.status(t, "r").Pools[0].ShareableSummary
	want := &resourcev1alpha3.ShareableSummaryStatus{FullyAvailableDevices: ptr.To[int32](1), PartiallyAvailableDevices: ptr.To[int32](1),
		Capacity: []resourcev1alpha3.ShareableCapacityStatus{
			{Name: "bandwidth", Total: ptr.To(qty("20G")), Consumed: ptr.To(qty("3G")), Available: ptr.To(qty("17G"))},
			{Name: "memory", Total: ptr.To(qty("2Gi")), Consumed: ptr.To(qty("5Gi")), Available: ptr.To(qty("0"))},
		}}
	if show(got) != show(want) {
		t.Errorf("shareableSummary %s\nwant %s", show(got), show(want))
	}

	f = newFixture(t, request("r"), slice("s", "p", "n", 1, 1, resourcev1.Device{Name: "plain"}))
	if got := f.status(t, "r").Pools[0].ShareableSummary; got != nil {
		t.Errorf("shareableSummary %s for a pool without shareable devices", show(got))
	}
}
