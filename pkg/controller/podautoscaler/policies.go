package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// changeInPeriod sums the changes of the events within the last period
// seconds.
func changeInPeriod(periodSeconds int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var total int32
	for _, e := range events {
		if e.timestamp.After(cutoff) {
			total += e.change
		}
	}
	return total
}

// periodStart is the replica count at the start of a policy's period.
func periodStart(current, periodSeconds int32, ups, downs []scaleEvent, now time.Time) int32 {
	return current - changeInPeriod(periodSeconds, ups, now) + changeInPeriod(periodSeconds, downs, now)
}

// scaleUpLimit is the highest count the scale-up policies allow now:
// with selectPolicy Max the most permissive policy's, with Min the least,
// with Disabled the current count.
func scaleUpLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	pick, result := maxInt32, int32(math.MinInt32)
	switch *rules.SelectPolicy {
	case autoscalingv2.DisabledPolicySelect:
		return current
	case autoscalingv2.MinChangePolicySelect:
		pick, result = minInt32, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p.PeriodSeconds, ups, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			// Rounded up, so that a small count can always grow.
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is the lowest count the scale-down policies allow now.
func scaleDownLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	pick, result := minInt32, int32(math.MaxInt32)
	switch *rules.SelectPolicy {
	case autoscalingv2.DisabledPolicySelect:
		return current
	case autoscalingv2.MinChangePolicySelect:
		pick, result = maxInt32, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p.PeriodSeconds, ups, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// defaultBehavior fills what the API server's defaulting leaves to the
// controller (a scale-down window unset: the
// --horizontal-pod-autoscaler-downscale-stabilization flag's), and what it
// would have set on an object that did not come through it.
func (c *Controller) defaultBehavior(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	b := hpa.Spec.Behavior
	if b.ScaleUp == nil {
		b.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if b.ScaleDown == nil {
		b.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		b.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(c.downscaleStabilization.Seconds()))
	}
	if b.ScaleUp.StabilizationWindowSeconds == nil {
		b.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	for _, r := range []*autoscalingv2.HPAScalingRules{b.ScaleUp, b.ScaleDown} {
		if r.SelectPolicy == nil {
			r.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
		}
	}
	if b.ScaleUp.Policies == nil {
		b.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}
	}
	if b.ScaleDown.Policies == nil {
		b.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}
	}
}

func minInt32(a, b int32) int32 { return min(a, b) }
func maxInt32(a, b int32) int32 { return max(a, b) }
