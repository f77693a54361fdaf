package resourcepoolstatusrequest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// maxStatusListItems is the API's limit (+k8s:maxItems=32) on the views'
// lists: a view that would exceed it is reported as a validation error
// rather than cut.
const maxStatusListItems = 32

// Upstream's machine-readable prefixes of a pool's validationError. Only
// PoolIncomplete is transient.
const (
	prefixPoolIncomplete          = "PoolIncomplete:"
	prefixPartitionTypeMissing    = "PartitionTypeMissing:"
	prefixPartitionCostMismatch   = "PartitionCostMismatch:"
	prefixPartitionSummaryOverCap = "PartitionSummaryOverCap:"
	prefixShareableOverCap        = "ShareableSummaryOverCap:"
)

// deviceRecord is what the views need of one device.
type deviceRecord struct {
	name string
	// partitionAttr is the device's grouping attribute: its slice's
	// partitionTypeAttribute, else (see resolveDevicePartitions) the
	// request's default, else "".
	partitionAttr string
	// partitionType is the device's value of partitionAttr;
	// hasPartitionType is false if it has no such string attribute.
	partitionType    string
	hasPartitionType bool
	consumesCounters []resourcev1.DeviceCounterConsumption
	allowMultiple    bool
	capacity         map[resourcev1.QualifiedName]resourcev1.DeviceCapacity
	attributes       map[resourcev1.QualifiedName]resourcev1.DeviceAttribute
}

func sliceDeviceRecords(s *resourcev1.ResourceSlice) []deviceRecord {
	attr := string(ptr.Deref(s.Spec.PartitionTypeAttribute, ""))
	out := make([]deviceRecord, 0, len(s.Spec.Devices))
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		out = append(out, deviceRecord{
			name:             d.Name,
			partitionAttr:    attr,
			consumesCounters: d.ConsumesCounters,
			allowMultiple:    ptr.Deref(d.AllowMultipleAllocations, false),
			capacity:         d.Capacity,
			attributes:       d.Attributes,
		})
	}
	return out
}

// poolViewInput is one complete pool as the views see it.
type poolViewInput struct {
	driver, poolName string
	devices          []deviceRecord
	// sharedCounters of all the pool's slices (set names are unique in a
	// pool).
	sharedCounters []resourcev1.CounterSet
	// inUse are the devices allocated to at least one claim.
	inUse map[string]struct{}
	// consumedCapacity sums the claims' consumed capacity by name.
	consumedCapacity map[resourcev1.QualifiedName]resource.Quantity
}

// resolveDevicePartitions sets each device's grouping attribute and
// partition type. A slice's own attribute wins; the request's default
// applies only if no slice of the pool declares one.
func resolveDevicePartitions(requestAttr *string, in *poolViewInput) {
	declared := slices.ContainsFunc(in.devices, func(d deviceRecord) bool { return d.partitionAttr != "" })
	for i := range in.devices {
		d := &in.devices[i]
		if d.partitionAttr == "" {
			if declared || requestAttr == nil {
				continue
			}
			d.partitionAttr = *requestAttr
		}
		d.partitionType, d.hasPartitionType = partitionType(in.driver, d.attributes, d.partitionAttr)
	}
}

// partitionType is the string value of the attribute named fqn. An
// attribute in the driver's own domain may also be stored without it (as
// CEL selectors allow); the fully qualified key wins.
func partitionType(driver string, attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute, fqn string) (string, bool) {
	a, ok := attrs[resourcev1.QualifiedName(fqn)]
	if !ok {
		if bare, cut := strings.CutPrefix(fqn, driver+"/"); cut {
			a, ok = attrs[resourcev1.QualifiedName(bare)]
		}
	}
	if !ok || a.StringValue == nil {
		return "", false
	}
	return *a.StringValue, true
}

// computePoolViews returns the pool's partition summary and shareable
// summary, and the first problem found (prefixed) as its validation
// error; the partition summary is dropped whenever there is one, the
// shareable summary only when it is its own problem.
func computePoolViews(in poolViewInput) ([]resourcev1alpha3.PartitionTypeStatus, *resourcev1alpha3.ShareableSummaryStatus, string) {
	var partitions []resourcev1alpha3.PartitionTypeStatus
	var problem string
	if slices.ContainsFunc(in.devices, func(d deviceRecord) bool { return d.partitionAttr != "" }) {
		if len(in.sharedCounters) == 0 {
			problem = fmt.Sprintf("%s pool %s/%s declares partitionTypeAttribute but publishes no sharedCounters",
				prefixPartitionTypeMissing, in.driver, in.poolName)
		} else {
			partitions, problem = partitionSummary(in)
		}
	}
	shareable, shareableProblem := shareableSummary(in)
	if shareableProblem != "" {
		shareable = nil
		if problem == "" {
			problem = shareableProblem
		}
	}
	if problem != "" {
		partitions = nil
	}
	return partitions, shareable, problem
}

// partitionSummary groups the partitionable devices (those consuming
// counters and with a grouping attribute) by attribute and partition
// type, and reports for each group its size and how many of its free
// devices still fit in the counters the allocated devices leave, each
// group measured on its own.
func partitionSummary(in poolViewInput) ([]resourcev1alpha3.PartitionTypeStatus, string) {
	type key struct{ attr, typ string }
	type group struct {
		total int32
		free  []deviceRecord
		cost  string
	}
	groups := map[key]*group{}
	for _, d := range in.devices {
		if len(d.consumesCounters) == 0 || d.partitionAttr == "" {
			continue
		}
		if !d.hasPartitionType {
			return nil, fmt.Sprintf("%s device %q in pool %s/%s does not carry partition type attribute %q",
				prefixPartitionTypeMissing, d.name, in.driver, in.poolName, d.partitionAttr)
		}
		k := key{d.partitionAttr, d.partitionType}
		g := groups[k]
		if g == nil {
			g = &group{cost: costKey(d.consumesCounters)}
			groups[k] = g
		} else if costKey(d.consumesCounters) != g.cost {
			return nil, fmt.Sprintf("%s devices of partition type %q in pool %s/%s consume different counters",
				prefixPartitionCostMismatch, d.partitionType, in.driver, in.poolName)
		}
		g.total++
		if _, used := in.inUse[d.name]; !used {
			g.free = append(g.free, d)
		}
	}
	left := remainingCounters(in.sharedCounters, in.devices, in.inUse)
	out := make([]resourcev1alpha3.PartitionTypeStatus, 0, len(groups))
	for k, g := range groups {
		avail := cloneCounters(left)
		fits := int32(0)
		for _, d := range g.free {
			if fit(d.consumesCounters, avail) {
				fits++
				deduct(d.consumesCounters, avail)
			}
		}
		out = append(out, resourcev1alpha3.PartitionTypeStatus{Attribute: k.attr, Type: k.typ, Total: ptr.To(g.total), Allocatable: ptr.To(fits)})
	}
	slices.SortFunc(out, func(a, b resourcev1alpha3.PartitionTypeStatus) int {
		return cmp.Or(strings.Compare(a.Attribute, b.Attribute), strings.Compare(a.Type, b.Type))
	})
	if len(out) > maxStatusListItems {
		return nil, fmt.Sprintf("%s pool %s/%s has %d partition types, exceeding the maximum of %d",
			prefixPartitionSummaryOverCap, in.driver, in.poolName, len(out), maxStatusListItems)
	}
	return out, ""
}

// shareableSummary reports the pool's devices that allow multiple
// allocations: how many are untouched and how many in use, and per
// capacity name the total, what claims consume and what is left. nil if
// the pool has none.
func shareableSummary(in poolViewInput) (*resourcev1alpha3.ShareableSummaryStatus, string) {
	var full, partial int32
	total := map[resourcev1.QualifiedName]resource.Quantity{}
	for _, d := range in.devices {
		if !d.allowMultiple {
			continue
		}
		if _, used := in.inUse[d.name]; used {
			partial++
		} else {
			full++
		}
		for name, c := range d.capacity {
			sum := total[name].DeepCopy()
			sum.Add(c.Value)
			total[name] = sum
		}
	}
	if full+partial == 0 {
		return nil, ""
	}
	names := make([]resourcev1.QualifiedName, 0, len(total))
	for name := range total {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) > maxStatusListItems {
		return nil, fmt.Sprintf("%s pool %s/%s has %d shareable capacity keys, exceeding the maximum of %d",
			prefixShareableOverCap, in.driver, in.poolName, len(names), maxStatusListItems)
	}
	capacities := make([]resourcev1alpha3.ShareableCapacityStatus, 0, len(names))
	for _, name := range names {
		t := total[name]
		consumed := resource.Quantity{}
		if q, ok := in.consumedCapacity[name]; ok {
			consumed = q.DeepCopy()
		}
		avail := t.DeepCopy()
		avail.Sub(consumed)
		if avail.Sign() < 0 {
			avail = *resource.NewQuantity(0, t.Format)
		}
		capacities = append(capacities, resourcev1alpha3.ShareableCapacityStatus{Name: string(name), Total: &t, Consumed: &consumed, Available: &avail})
	}
	return &resourcev1alpha3.ShareableSummaryStatus{FullyAvailableDevices: ptr.To(full), PartiallyAvailableDevices: ptr.To(partial), Capacity: capacities}, ""
}
