package devicetainteviction

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// taintOrigin is one NoExecute taint and where it comes from: a
// DeviceTaintRule (rule set) or the taint at index of a device in a
// ResourceSlice.
type taintOrigin struct {
	rule   *resourceapi.DeviceTaintRule
	slice  *resourceapi.ResourceSlice
	device string
	index  int
}

// taint returns the taint itself.
func (o taintOrigin) taint() resourceapi.DeviceTaint {
	if o.rule != nil {
		return o.rule.Spec.Taint
	}
	for _, d := range o.slice.Spec.Devices {
		if d.Name == o.device {
			return d.Taints[o.index]
		}
	}
	return resourceapi.DeviceTaint{}
}

func (o taintOrigin) String() string {
	if o.rule != nil {
		return fmt.Sprintf("DeviceTaintRule %s", o.rule.Name)
	}
	return fmt.Sprintf("ResourceSlice %s %s/%s/%s taint #%d", o.slice.Name, o.slice.Spec.Driver, o.slice.Spec.Pool.Name, o.device, o.index)
}

// compareOrigins orders taints as upstream does: rules first, by name,
// then slice taints by driver, pool, device and index.
func compareOrigins(a, b taintOrigin) int {
	switch {
	case a.rule != nil && b.rule != nil:
		return strings.Compare(a.rule.Name, b.rule.Name)
	case a.rule != nil:
		return -1
	case b.rule != nil:
		return 1
	}
	if c := strings.Compare(a.slice.Spec.Driver, b.slice.Spec.Driver); c != 0 {
		return c
	}
	if c := strings.Compare(a.slice.Spec.Pool.Name, b.slice.Spec.Pool.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.device, b.device); c != 0 {
		return c
	}
	return a.index - b.index
}

// eviction is when a pod (or every pod using a claim) has to be evicted,
// and every taint that asks for it, in compareOrigins order.
type eviction struct {
	when    time.Time
	reasons []taintOrigin
}

func (e *eviction) String() string {
	parts := make([]string, len(e.reasons))
	for i, r := range e.reasons {
		parts[i] = r.String()
	}
	return fmt.Sprintf("%s (%s)", e.when.UTC().Format(time.RFC3339), strings.Join(parts, ", "))
}

// hasRule reports whether one of the reasons is the DeviceTaintRule.
func (e *eviction) hasRule(rule *resourceapi.DeviceTaintRule) bool {
	return slices.ContainsFunc(e.reasons, func(o taintOrigin) bool { return o.rule != nil && o.rule.UID == rule.UID })
}

// merge joins two evictions: the earlier time, both sets of reasons.
func merge(a, b *eviction) *eviction {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := &eviction{when: a.when, reasons: append(slices.Clone(a.reasons), b.reasons...)}
	if b.when.Before(out.when) {
		out.when = b.when
	}
	slices.SortFunc(out.reasons, compareOrigins)
	out.reasons = slices.CompactFunc(out.reasons, func(x, y taintOrigin) bool { return compareOrigins(x, y) == 0 })
	return out
}

// evaluator decides, from the informers' state, whether and when pods
// have to be evicted.
type evaluator struct {
	claims resourcelisters.ResourceClaimLister
	slices cache.Indexer // with slicePoolIndex
	// rules are the DeviceTaintRules whose effect is NoExecute.
	rules          []*resourceapi.DeviceTaintRule
	workloadClaims bool
}

// newEvaluator returns the evaluator of the current state.
func (c *Controller) newEvaluator() (*evaluator, error) {
	e := &evaluator{claims: c.claims, slices: c.sliceIndexer, workloadClaims: c.features.WorkloadResourceClaims}
	if c.rules == nil {
		return e, nil
	}
	rules, err := c.rules.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing DeviceTaintRules: %w", err)
	}
	for _, rule := range rules {
		if rule.Spec.Taint.Effect == resourceapi.DeviceTaintEffectNoExecute {
			e.rules = append(e.rules, rule)
		}
	}
	return e, nil
}

// podEviction returns when the pod has to be evicted, or nil if it does
// not. Only a pod bound to a node is evicted, and only for the claims it
// uses that are allocated and reserved for it (or, under
// DRAWorkloadResourceClaims, for its PodGroup).
func (e *evaluator) podEviction(pod *v1.Pod) (*eviction, error) {
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	var out *eviction
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			// Not created yet, or not needed: not tainted.
			continue
		}
		claim, err := e.claims.ResourceClaims(pod.Namespace).Get(*name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if claim.Status.Allocation == nil ||
			mustCheckOwner && resourceclaim.IsForPod(pod, claim, e.workloadClaims) != nil ||
			!resourceclaim.IsReservedForPod(pod, claim, e.workloadClaims) {
			continue
		}
		out = merge(out, e.claimEviction(claim))
	}
	return out, nil
}

// claimEviction returns when the pods using an allocated claim have to be
// evicted: the earliest time any of its devices' NoExecute taints stops
// being tolerated. A taint is tolerated forever by a matching toleration
// without tolerationSeconds; otherwise it is tolerated from its
// timeAdded for the smallest tolerationSeconds of the matching
// tolerations (none: not at all). As upstream, only tolerations that
// name the NoExecute effect count.
func (e *evaluator) claimEviction(claim *resourceapi.ResourceClaim) *eviction {
	var out *eviction
	for _, result := range claim.Status.Allocation.Devices.Results {
	taints:
		for _, origin := range e.deviceTaints(result) {
			taint := origin.taint()
			seconds, tolerated := int64(math.MaxInt64), false
			for _, toleration := range result.Tolerations {
				if toleration.Effect != resourceapi.DeviceTaintEffectNoExecute || !resourceclaim.ToleratesTaint(toleration, taint) {
					continue
				}
				if toleration.TolerationSeconds == nil {
					continue taints
				}
				seconds, tolerated = min(seconds, max(*toleration.TolerationSeconds, 0)), true
			}
			var when time.Time
			if taint.TimeAdded != nil {
				when = taint.TimeAdded.Time
			}
			if tolerated {
				when = when.Add(time.Duration(seconds) * time.Second)
			}
			out = merge(out, &eviction{when: when, reasons: []taintOrigin{origin}})
		}
	}
	return out
}

// deviceTaints returns the NoExecute taints of an allocated device: those
// of the device in its pool's newest ResourceSlices and those of the
// DeviceTaintRules that select it.
func (e *evaluator) deviceTaints(result resourceapi.DeviceRequestAllocationResult) []taintOrigin {
	var out []taintOrigin
	if slice, device := e.device(result.Driver, result.Pool, result.Device); device != nil {
		for i, taint := range device.Taints {
			if taint.Effect == resourceapi.DeviceTaintEffectNoExecute {
				out = append(out, taintOrigin{slice: slice, device: device.Name, index: i})
			}
		}
	}
	for _, rule := range e.rules {
		if ruleSelects(rule, result.Driver, result.Pool, result.Device) {
			out = append(out, taintOrigin{rule: rule})
		}
	}
	return out
}

// device finds a device in the slices of the pool's highest generation;
// older slices are outdated.
func (e *evaluator) device(driver, pool, name string) (*resourceapi.ResourceSlice, *resourceapi.Device) {
	for _, slice := range currentSlices(e.slices, driver, pool) {
		for i := range slice.Spec.Devices {
			if slice.Spec.Devices[i].Name == name {
				return slice, &slice.Spec.Devices[i]
			}
		}
	}
	return nil, nil
}

// currentSlices returns the pool's slices of its highest generation.
func currentSlices(indexer cache.Indexer, driver, pool string) []*resourceapi.ResourceSlice {
	objs, err := indexer.ByIndex(slicePoolIndex, poolKey(driver, pool))
	if err != nil {
		return nil
	}
	var out []*resourceapi.ResourceSlice
	generation := int64(math.MinInt64)
	for _, obj := range objs {
		slice, ok := obj.(*resourceapi.ResourceSlice)
		if !ok {
			continue
		}
		switch g := slice.Spec.Pool.Generation; {
		case g > generation:
			generation, out = g, []*resourceapi.ResourceSlice{slice}
		case g == generation:
			out = append(out, slice)
		}
	}
	return out
}

// ruleSelects reports whether a DeviceTaintRule selects the device. A
// rule without a selector selects nothing.
func ruleSelects(rule *resourceapi.DeviceTaintRule, driver, pool, device string) bool {
	s := rule.Spec.DeviceSelector
	return s != nil &&
		(s.Driver == nil || *s.Driver == driver) &&
		(s.Pool == nil || *s.Pool == pool) &&
		(s.Device == nil || *s.Device == device)
}
