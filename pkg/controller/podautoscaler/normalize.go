package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
)

// Without a behavior, one sync scales up to at most twice the current
// count, and at least to 4.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// Reasons and messages of the AbleToScale and ScalingLimited conditions
// normalization sets.
const (
	msgScaleDownStabilized = "recent recommendations were higher than current one, applying the highest recent recommendation"
	msgScaleUpStabilized   = "recent recommendations were lower than current one, applying the lowest recent recommendation"
	msgReadyForNewScale    = "recommended size matches current size"
	msgDesiredWithinRange  = "the desired count is within the acceptable range"
	msgScaleUpLimit        = "the desired replica count is increasing faster than the maximum scale rate"
	msgScaleDownLimit      = "the desired replica count is decreasing faster than the maximum scale rate"
	msgTooManyReplicas     = "the desired replica count is more than the maximum replica count"
	msgTooFewReplicas      = "the desired replica count is less than the minimum replica count"
)

// normalize stabilizes the metrics' count over
// --horizontal-pod-autoscaler-downscale-stabilization and bounds it by
// minReplicas, maxReplicas and the scale-up limit (HPAs without behavior).
func (c *Controller) normalize(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32) int32 {
	stabilized := c.history.stabilize(key, desired, c.downscaleStabilization, c.clock.Now())
	if stabilized != desired {
		c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "ScaleDownStabilized", msgScaleDownStabilized)
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "ReadyForNewScale", msgReadyForNewScale)
	}
	bounded, reason, message := boundReplicas(current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	limited := v1.ConditionFalse
	if bounded != stabilized {
		limited = v1.ConditionTrue
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, limited, reason, message)
	return bounded
}

// boundReplicas bounds desired by minReplicas and by the lower of
// maxReplicas and the scale-up limit.
func boundReplicas(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maxAllowed, reason, message := maxReplicas, "TooManyReplicas", msgTooManyReplicas
	if maxReplicas > upLimit {
		maxAllowed, reason, message = upLimit, "ScaleUpLimit", msgScaleUpLimit
	}
	switch {
	case desired < minReplicas:
		return minReplicas, "TooFewReplicas", msgTooFewReplicas
	case desired > maxAllowed:
		return maxAllowed, reason, message
	}
	return desired, "DesiredWithinRange", msgDesiredWithinRange
}

// normalizeWithBehaviors applies the behavior's stabilization windows,
// then its scaling policies and minReplicas/maxReplicas.
func (c *Controller) normalizeWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32) int32 {
	c.defaultBehavior(hpa)
	b := hpa.Spec.Behavior
	upWindow := time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second
	downWindow := time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
	stabilized := c.history.stabilizeWithBehaviors(key, current, desired, upWindow, downWindow, c.clock.Now())
	switch {
	case stabilized == desired:
		c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "ReadyForNewScale", msgReadyForNewScale)
	case desired >= current:
		c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "ScaleUpStabilized", msgScaleUpStabilized)
	default:
		c.setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "ScaleDownStabilized", msgScaleDownStabilized)
	}
	bounded, reason, message := c.boundByPolicies(key, b, current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	limited := v1.ConditionFalse
	if bounded != stabilized {
		limited = v1.ConditionTrue
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, limited, reason, message)
	return bounded
}

// boundByPolicies bounds desired by what the scaling policies allow in
// their periods, and by minReplicas and maxReplicas.
func (c *Controller) boundByPolicies(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	ups, downs := c.history.events(key)
	now := c.clock.Now()
	switch {
	case desired > current:
		limit := max(scaleUpLimit(current, ups, downs, b.ScaleUp, now), current)
		maxAllowed, reason, message := maxReplicas, "TooManyReplicas", msgTooManyReplicas
		if maxReplicas > limit {
			maxAllowed, reason, message = limit, "ScaleUpLimit", msgScaleUpLimit
		}
		if desired > maxAllowed {
			return maxAllowed, reason, message
		}
	case desired < current:
		limit := min(scaleDownLimit(current, ups, downs, b.ScaleDown, now), current)
		minAllowed, reason, message := minReplicas, "TooFewReplicas", msgTooFewReplicas
		if minReplicas < limit {
			minAllowed, reason, message = limit, "ScaleDownLimit", msgScaleDownLimit
		}
		if desired < minAllowed {
			return minAllowed, reason, message
		}
	}
	return desired, "DesiredWithinRange", msgDesiredWithinRange
}
