package devicetainteviction

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// The handlers only find the pods (and DeviceTaintRules) a change may
// concern and enqueue them; syncPod decides from the listers.

// addPod enqueues a bound pod that uses claims.
func (c *Controller) addPod(obj any) {
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" && len(pod.Spec.ResourceClaims) > 0 {
		c.enqueuePod(pod.Namespace, pod.Name)
	}
}

// updatePod enqueues a pod that uses claims when it is bound or its
// generated claims are named; other pod updates change nothing here (in
// particular the DisruptionTarget condition this controller adds).
func (c *Controller) updatePod(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.Pod)
	pod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 || len(pod.Spec.ResourceClaims) == 0 {
		return
	}
	if old.Spec.NodeName != pod.Spec.NodeName ||
		!apiequality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		c.enqueuePod(pod.Namespace, pod.Name)
	}
}

// deletePod enqueues a deleted pod that used claims, so that its pending
// eviction, if any, is dropped.
func (c *Controller) deletePod(obj any) {
	if pod, ok := objectOf(obj).(*v1.Pod); ok && len(pod.Spec.ResourceClaims) > 0 {
		c.enqueuePod(pod.Namespace, pod.Name)
	}
}

// claimChanged enqueues the consumers of a claim whose allocation,
// reservations or owners changed (before and after the change).
func (c *Controller) claimChanged(logger klog.Logger, oldObj, newObj any) {
	old, _ := oldObj.(*resourceapi.ResourceClaim)
	claim, _ := newObj.(*resourceapi.ResourceClaim)
	if old != nil && claim != nil && old.UID == claim.UID &&
		apiequality.Semantic.DeepEqual(old.Status.Allocation, claim.Status.Allocation) &&
		slices.Equal(old.Status.ReservedFor, claim.Status.ReservedFor) &&
		apiequality.Semantic.DeepEqual(old.OwnerReferences, claim.OwnerReferences) {
		return
	}
	for _, cl := range []*resourceapi.ResourceClaim{old, claim} {
		if cl != nil && cl.Status.Allocation != nil {
			logger.V(6).Info("ResourceClaim changed", "claim", klog.KObj(cl))
			c.enqueueConsumers(cl)
		}
	}
}

// enqueueConsumers enqueues the pods a claim is reserved for, directly or
// (under DRAWorkloadResourceClaims) through their PodGroup.
func (c *Controller) enqueueConsumers(claim *resourceapi.ResourceClaim) {
	for _, consumer := range claim.Status.ReservedFor {
		switch {
		case consumer.APIGroup == "" && consumer.Resource == "pods":
			c.enqueuePod(claim.Namespace, consumer.Name)
		case consumer.APIGroup == schedulingapi.GroupName && consumer.Resource == "podgroups" && c.features.WorkloadResourceClaims:
			objs, err := c.podIndexer.ByIndex(podGroupIndex, claim.Namespace+"/"+consumer.Name)
			if err != nil {
				continue
			}
			for _, obj := range objs {
				if pod, ok := obj.(*v1.Pod); ok {
					c.enqueuePod(pod.Namespace, pod.Name)
				}
			}
		}
	}
}

// enqueuePoolConsumers enqueues the consumers of every claim allocated
// from the pool.
func (c *Controller) enqueuePoolConsumers(driver, pool string) {
	objs, err := c.claimIndexer.ByIndex(claimPoolIndex, poolKey(driver, pool))
	if err != nil {
		return
	}
	for _, obj := range objs {
		if claim, ok := obj.(*resourceapi.ResourceClaim); ok {
			c.enqueueConsumers(claim)
		}
	}
}

// sliceChanged enqueues the consumers of the pool's claims when the
// NoExecute taints the pool publishes may have changed: the slice's own
// changed, or the slice came, went or changed generation in a pool that
// has some (which may make other slices outdated or current again).
func (c *Controller) sliceChanged(logger klog.Logger, oldObj, newObj any) {
	old, _ := oldObj.(*resourceapi.ResourceSlice)
	slice, _ := newObj.(*resourceapi.ResourceSlice)
	if old != nil && slice != nil && poolKey(old.Spec.Driver, old.Spec.Pool.Name) != poolKey(slice.Spec.Driver, slice.Spec.Pool.Name) {
		// Moved to another pool: it left one and joined the other.
		c.sliceChanged(logger, old, nil)
		c.sliceChanged(logger, nil, slice)
		return
	}
	s := slice
	if s == nil {
		s = old
	}
	changed := !slices.EqualFunc(noExecuteTaints(old), noExecuteTaints(slice), func(a, b deviceTaint) bool {
		return a.device == b.device && apiequality.Semantic.DeepEqual(a.taint, b.taint)
	})
	if !changed && (old == nil || slice == nil || old.Spec.Pool.Generation != slice.Spec.Pool.Generation) {
		changed = c.poolHasNoExecuteTaints(s.Spec.Driver, s.Spec.Pool.Name)
	}
	if !changed {
		return
	}
	logger.V(6).Info("ResourceSlice changed the pool's NoExecute taints", "slice", klog.KObj(s), "driver", s.Spec.Driver, "pool", s.Spec.Pool.Name)
	c.enqueuePoolConsumers(s.Spec.Driver, s.Spec.Pool.Name)
}

// deviceTaint is a NoExecute taint of a named device.
type deviceTaint struct {
	device string
	taint  resourceapi.DeviceTaint
}

// noExecuteTaints lists a slice's NoExecute taints in device order.
func noExecuteTaints(slice *resourceapi.ResourceSlice) []deviceTaint {
	if slice == nil {
		return nil
	}
	var out []deviceTaint
	for _, d := range slice.Spec.Devices {
		for _, t := range d.Taints {
			if t.Effect == resourceapi.DeviceTaintEffectNoExecute {
				out = append(out, deviceTaint{device: d.Name, taint: t})
			}
		}
	}
	return out
}

// poolHasNoExecuteTaints reports whether any cached slice of the pool, of
// any generation, has a NoExecute taint.
func (c *Controller) poolHasNoExecuteTaints(driver, pool string) bool {
	objs, err := c.sliceIndexer.ByIndex(slicePoolIndex, poolKey(driver, pool))
	if err != nil {
		return true
	}
	for _, obj := range objs {
		if slice, ok := obj.(*resourceapi.ResourceSlice); ok && len(noExecuteTaints(slice)) > 0 {
			return true
		}
	}
	return false
}

// ruleChanged enqueues a DeviceTaintRule's status at once when it is
// created or its spec changes, and the consumers of the claims its
// NoExecute taint selects, before and after the change.
func (c *Controller) ruleChanged(logger klog.Logger, oldObj, newObj any) {
	old, _ := oldObj.(*resourceapi.DeviceTaintRule)
	rule, _ := newObj.(*resourceapi.DeviceTaintRule)
	if old != nil && rule != nil && old.UID != rule.UID {
		// Replaced under the same name.
		c.ruleChanged(logger, old, nil)
		c.ruleChanged(logger, nil, rule)
		return
	}
	if rule == nil {
		c.mu.Lock()
		delete(c.ruleEvictions, old.UID)
		c.mu.Unlock()
	}
	if old != nil && rule != nil && apiequality.Semantic.DeepEqual(old.Spec, rule.Spec) {
		return
	}
	if rule != nil {
		logger.V(5).Info("Immediate status update of a new or changed DeviceTaintRule", "deviceTaintRule", klog.KObj(rule))
		c.enqueueRule(rule.Name, 0)
	}
	for _, r := range []*resourceapi.DeviceTaintRule{old, rule} {
		if r != nil && r.Spec.Taint.Effect == resourceapi.DeviceTaintEffectNoExecute {
			c.enqueueRuleConsumers(r)
		}
	}
}

// enqueueRuleConsumers enqueues the consumers of every allocated claim
// with a device the rule selects.
func (c *Controller) enqueueRuleConsumers(rule *resourceapi.DeviceTaintRule) {
	var objs []any
	if s := rule.Spec.DeviceSelector; s != nil && s.Driver != nil && s.Pool != nil {
		objs, _ = c.claimIndexer.ByIndex(claimPoolIndex, poolKey(*s.Driver, *s.Pool))
	} else {
		claims, _ := c.claims.List(labels.Everything())
		for _, claim := range claims {
			objs = append(objs, claim)
		}
	}
	for _, obj := range objs {
		claim, ok := obj.(*resourceapi.ResourceClaim)
		if !ok || claim.Status.Allocation == nil {
			continue
		}
		if slices.ContainsFunc(claim.Status.Allocation.Devices.Results, func(r resourceapi.DeviceRequestAllocationResult) bool {
			return ruleSelects(rule, r.Driver, r.Pool, r.Device)
		}) {
			c.enqueueConsumers(claim)
		}
	}
}
