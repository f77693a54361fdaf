package resourcepoolstatusrequest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// maxValidationErrorBytes is the API's limit on a pool's validationError.
const maxValidationErrorBytes = 256

// listError is a cache that could not be listed; the request then gets a
// Failed condition with upstream's message.
type listError struct {
	resource string
	err      error
}

func (e listError) Error() string { return "Failed to list " + e.resource + ": " + e.err.Error() }
func (e listError) Unwrap() error { return e.err }

// pool is what the slices of one pool at its latest generation say.
type pool struct {
	driver, name   string
	nodeName       string // of the first slice
	mixedNodes     bool   // slices name different nodes
	generation     int64
	slices         int32
	expectedSlices int64
	devices        int32
	unavailable    int32 // devices with a NoSchedule or NoExecute taint
	records        []deviceRecord
	sharedCounters []resourcev1.CounterSet
}

// usage is what allocated claims use of one pool: the devices (each counted
// once, however many claims share it) and the consumed capacity. Admin
// access results observe a device without using it and are left out.
type usage struct {
	devices  map[string]struct{}
	consumed map[resourcev1.QualifiedName]resource.Quantity
}

// inputs are the pools a request matches, keyed "driver/pool", with their
// usage.
type inputs struct {
	pools map[string]*pool
	usage map[string]*usage
}

// gather reads the matching pools and all allocations from the caches.
func (c *Controller) gather(request *resourcev1alpha3.ResourcePoolStatusRequest) (*inputs, error) {
	allSlices, err := c.slices.List(labels.Everything())
	if err != nil {
		return nil, listError{"ResourceSlices", err}
	}
	var rules []*resourcev1.DeviceTaintRule
	if c.taintRules != nil {
		if rules, err = c.taintRules.List(labels.Everything()); err != nil {
			return nil, listError{"DeviceTaintRules", err}
		}
	}
	claims, err := c.claims.List(labels.Everything())
	if err != nil {
		return nil, listError{"ResourceClaims", err}
	}
	return &inputs{
		pools: collectPools(allSlices, request.Spec.Driver, ptr.Deref(request.Spec.PoolName, ""), rules),
		usage: collectUsage(claims),
	}, nil
}

// collectPools aggregates the driver's slices (of one pool if poolName is
// set) by pool, counting only the slices of each pool's highest
// generation. Slices are taken in name order, so that a pool's node and
// the first device a validation error names do not depend on the cache's
// order.
func collectPools(all []*resourcev1.ResourceSlice, driver, poolName string, rules []*resourcev1.DeviceTaintRule) map[string]*pool {
	var matching []*resourcev1.ResourceSlice
	latest := map[string]int64{}
	for _, s := range all {
		if s.Spec.Driver != driver || (poolName != "" && s.Spec.Pool.Name != poolName) {
			continue
		}
		matching = append(matching, s)
		key := s.Spec.Driver + "/" + s.Spec.Pool.Name
		if g, ok := latest[key]; !ok || s.Spec.Pool.Generation > g {
			latest[key] = s.Spec.Pool.Generation
		}
	}
	slices.SortFunc(matching, func(a, b *resourcev1.ResourceSlice) int { return strings.Compare(a.Name, b.Name) })
	pools := map[string]*pool{}
	for _, s := range matching {
		key := s.Spec.Driver + "/" + s.Spec.Pool.Name
		if s.Spec.Pool.Generation < latest[key] {
			continue
		}
		node := ptr.Deref(s.Spec.NodeName, "")
		p := pools[key]
		if p == nil {
			p = &pool{driver: s.Spec.Driver, name: s.Spec.Pool.Name, nodeName: node,
				generation: latest[key], expectedSlices: s.Spec.Pool.ResourceSliceCount}
			pools[key] = p
		} else if node != p.nodeName {
			p.mixedNodes = true
		}
		p.slices++
		p.devices += int32(len(s.Spec.Devices))
		for i := range s.Spec.Devices {
			if deviceUnavailable(s.Spec.Driver, s.Spec.Pool.Name, &s.Spec.Devices[i], rules) {
				p.unavailable++
			}
		}
		p.records = append(p.records, sliceDeviceRecords(s)...)
		p.sharedCounters = append(p.sharedCounters, s.Spec.SharedCounters...)
	}
	return pools
}

// collectUsage sums the allocations of all claims by pool.
func collectUsage(claims []*resourcev1.ResourceClaim) map[string]*usage {
	out := map[string]*usage{}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			key := r.Driver + "/" + r.Pool
			u := out[key]
			if u == nil {
				u = &usage{devices: map[string]struct{}{}, consumed: map[resourcev1.QualifiedName]resource.Quantity{}}
				out[key] = u
			}
			u.devices[r.Device] = struct{}{}
			for name, q := range r.ConsumedCapacity {
				sum := u.consumed[name].DeepCopy()
				sum.Add(q)
				u.consumed[name] = sum
			}
		}
	}
	return out
}

// poolStatuses returns every gathered pool's status, sorted by driver and
// pool name. A pool missing slices of its latest generation only gets a
// PoolIncomplete validation error; a complete one gets its counts and, if
// they apply, the partition and shareable views.
func (in *inputs) poolStatuses(defaultPartitionAttr *string) []resourcev1alpha3.PoolStatus {
	out := make([]resourcev1alpha3.PoolStatus, 0, len(in.pools))
	for key, p := range in.pools {
		st := resourcev1alpha3.PoolStatus{Driver: p.driver, PoolName: p.name, Generation: p.generation}
		if p.nodeName != "" && !p.mixedNodes {
			st.NodeName = ptr.To(p.nodeName)
		}
		if int64(p.slices) < p.expectedSlices {
			st.ValidationError = validationError(fmt.Sprintf("%s pool %s/%s is incomplete: observed %d/%d slices at generation %d",
				prefixPoolIncomplete, p.driver, p.name, p.slices, p.expectedSlices, p.generation))
			out = append(out, st)
			continue
		}
		u := in.usage[key]
		if u == nil {
			u = &usage{}
		}
		allocated := int32(len(u.devices))
		st.ResourceSliceCount = ptr.To(p.slices)
		st.TotalDevices = ptr.To(p.devices)
		st.AllocatedDevices = ptr.To(allocated)
		st.AvailableDevices = ptr.To(max(0, p.devices-allocated-p.unavailable))
		st.UnavailableDevices = ptr.To(p.unavailable)

		v := poolViewInput{driver: p.driver, poolName: p.name, devices: slices.Clone(p.records),
			sharedCounters: p.sharedCounters, inUse: u.devices, consumedCapacity: u.consumed}
		resolveDevicePartitions(defaultPartitionAttr, &v)
		var problem string
		st.PartitionSummary, st.ShareableSummary, problem = computePoolViews(v)
		if problem != "" {
			st.ValidationError = validationError(problem)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b resourcev1alpha3.PoolStatus) int {
		return cmp.Or(strings.Compare(a.Driver, b.Driver), strings.Compare(a.PoolName, b.PoolName))
	})
	return out
}

// validationError cuts msg to the API's limit.
func validationError(msg string) *string {
	if len(msg) > maxValidationErrorBytes {
		msg = msg[:maxValidationErrorBytes]
	}
	return &msg
}

// isIncomplete reports whether a validation error is the transient
// PoolIncomplete one.
func isIncomplete(validationError string) bool {
	return strings.HasPrefix(validationError, prefixPoolIncomplete)
}
