package devicetainteviction

import (
	"context"
	"fmt"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	resourceac "k8s.io/client-go/applyconfigurations/resource/v1"
	"k8s.io/klog/v2"
)

// syncRuleStatus writes a DeviceTaintRule's EvictionInProgress condition
// as upstream computes it: at once for a new or changed rule, then at
// most every ruleStatusPeriod while pods are evicted because of it.
func (c *Controller) syncRuleStatus(ctx context.Context, name string) error {
	if c.rules == nil {
		return nil
	}
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "deviceTaintRule", klog.KRef("", name))
	rule, err := c.rules.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	now := metav1.NewTime(c.clock.Now())
	var existing metav1.Condition
	if i := slices.IndexFunc(rule.Status.Conditions, func(cond metav1.Condition) bool {
		return cond.Type == resourceapi.DeviceTaintConditionEvictionInProgress
	}); i >= 0 {
		existing = rule.Status.Conditions[i]
		// lastTransitionTime moves with every change of the condition,
		// message included: it says when the last update was.
		since := now.Sub(existing.LastTransitionTime.Time)
		if existing.ObservedGeneration == rule.Generation && since < ruleStatusPeriod {
			c.enqueueRule(name, ruleStatusPeriod-since)
			return nil
		}
	}
	cond, err := c.ruleCondition(rule, existing.LastTransitionTime)
	if err != nil {
		return err
	}
	if cond == existing {
		return nil
	}
	cond.LastTransitionTime = now
	logger.V(4).Info("Updating the DeviceTaintRule's condition", "condition", cond)
	ac := resourceac.DeviceTaintRule(rule.Name).WithUID(rule.UID).WithStatus(resourceac.DeviceTaintRuleStatus().WithConditions(
		metav1ac.Condition().
			WithType(cond.Type).
			WithStatus(cond.Status).
			WithReason(cond.Reason).
			WithMessage(cond.Message).
			WithObservedGeneration(cond.ObservedGeneration).
			WithLastTransitionTime(cond.LastTransitionTime)))
	if _, err := c.client.ResourceV1().DeviceTaintRules().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: c.name, Force: true}); err != nil {
		return fmt.Errorf("add condition to DeviceTaintRule status: %w", err)
	}
	return nil
}

// ruleCondition computes the EvictionInProgress condition, with
// lastTransitionTime as given so that an unchanged condition compares
// equal to the existing one.
func (c *Controller) ruleCondition(rule *resourceapi.DeviceTaintRule, lastTransition metav1.Time) (metav1.Condition, error) {
	cond := metav1.Condition{
		Type:               resourceapi.DeviceTaintConditionEvictionInProgress,
		Status:             metav1.ConditionFalse,
		ObservedGeneration: rule.Generation,
		LastTransitionTime: lastTransition,
	}
	c.mu.Lock()
	evicted := c.ruleEvictions[rule.UID]
	c.mu.Unlock()
	switch rule.Spec.Taint.Effect {
	case resourceapi.DeviceTaintEffectNoExecute:
		e, err := c.newEvaluator()
		if err != nil {
			return cond, err
		}
		pods, namespaces, err := c.pendingPods(e, rule)
		if err != nil {
			return cond, err
		}
		switch {
		case pods > 0:
			cond.Reason, cond.Status = "PodsPendingEviction", metav1.ConditionTrue
			cond.Message = plural(pods, "1 pod needs to be evicted in ", "%d pods need to be evicted in ") +
				plural(namespaces, "1 namespace.", "%d different namespaces.")
		case evicted > 0:
			cond.Reason = "Completed"
		default:
			cond.Reason = "NotStarted"
		}
	case resourceapi.DeviceTaintEffectNone:
		// What NoExecute would do: this rule's taint as if it were
		// NoExecute, alone among the rules.
		sim := rule.DeepCopy()
		sim.Spec.Taint.Effect = resourceapi.DeviceTaintEffectNoExecute
		e := &evaluator{claims: c.claims, slices: c.sliceIndexer, rules: []*resourceapi.DeviceTaintRule{sim}, workloadClaims: c.features.WorkloadResourceClaims}
		pods, namespaces, err := c.pendingPods(e, rule)
		if err != nil {
			return cond, err
		}
		published, allocated, err := c.selectedDevices(rule)
		if err != nil {
			return cond, err
		}
		cond.Reason = "NoEffect"
		cond.Message = plural(published, "1 published device selected. ", "%d published devices selected. ") +
			plural(allocated, "1 allocated device selected. ", "%d allocated devices selected. ") +
			plural(pods, "1 pod would be evicted in ", "%d pods would be evicted in ") +
			plural(namespaces, "1 namespace ", "%d different namespaces ") +
			"if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update."
	default:
		cond.Reason = "OtherEffect"
		cond.Message = "Eviction only happens for the NoExecute effect."
	}
	if evicted > 0 {
		if cond.Message != "" {
			cond.Message += " "
		}
		cond.Message += plural(evicted, "1 pod ", "%d pods ") + "evicted since starting the controller."
	}
	return cond, nil
}

// plural picks the singular text for 1, else formats the plural one.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// pendingPods counts the pods not yet terminating that have to be
// evicted because of the rule, and their namespaces.
func (c *Controller) pendingPods(e *evaluator, rule *resourceapi.DeviceTaintRule) (pods, namespaces int64, err error) {
	all, err := c.pods.List(labels.Everything())
	if err != nil {
		return 0, 0, fmt.Errorf("list pod: %w", err)
	}
	ns := sets.New[string]()
	for _, pod := range all {
		if pod.DeletionTimestamp != nil || len(pod.Spec.ResourceClaims) == 0 {
			continue
		}
		ev, err := e.podEviction(pod)
		if err != nil {
			return 0, 0, err
		}
		if ev != nil && ev.hasRule(rule) {
			pods++
			ns.Insert(pod.Namespace)
		}
	}
	return pods, int64(ns.Len()), nil
}

// selectedDevices counts the devices the rule selects among those the
// pools' current ResourceSlices publish and among the allocated ones.
func (c *Controller) selectedDevices(rule *resourceapi.DeviceTaintRule) (published, allocated int64, err error) {
	seen := sets.New[string]()
	for _, obj := range c.sliceIndexer.List() {
		slice, ok := obj.(*resourceapi.ResourceSlice)
		if !ok {
			continue
		}
		driver, pool := slice.Spec.Driver, slice.Spec.Pool.Name
		if seen.Has(poolKey(driver, pool)) {
			continue
		}
		seen.Insert(poolKey(driver, pool))
		for _, s := range currentSlices(c.sliceIndexer, driver, pool) {
			for _, d := range s.Spec.Devices {
				if ruleSelects(rule, driver, pool, d.Name) {
					published++
				}
			}
		}
	}
	claims, err := c.claims.List(labels.Everything())
	if err != nil {
		return 0, 0, fmt.Errorf("list claims: %w", err)
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if ruleSelects(rule, r.Driver, r.Pool, r.Device) {
				allocated++
			}
		}
	}
	return published, allocated, nil
}
