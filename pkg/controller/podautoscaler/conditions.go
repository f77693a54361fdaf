package podautoscaler

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCondition sets the condition of type t, appending it if absent; its
// lastTransitionTime moves only when its status changes.
func (c *Controller) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status v1.ConditionStatus, reason, message string) {
	conds := hpa.Status.Conditions
	i := 0
	for ; i < len(conds); i++ {
		if conds[i].Type == t {
			break
		}
	}
	if i == len(conds) {
		conds = append(conds, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t})
	}
	cond := &conds[i]
	if cond.Status != status {
		cond.LastTransitionTime = metav1.NewTime(c.clock.Now())
	}
	cond.Status, cond.Reason, cond.Message = status, reason, message
	hpa.Status.Conditions = conds
}

// setConditionf is setCondition with a formatted message.
func (c *Controller) setConditionf(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status v1.ConditionStatus, reason, format string, args ...any) {
	c.setCondition(hpa, t, status, reason, fmt.Sprintf(format, args...))
}

func removeCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) {
	kept := hpa.Status.Conditions[:0]
	for _, cond := range hpa.Status.Conditions {
		if cond.Type != t {
			kept = append(kept, cond)
		}
	}
	hpa.Status.Conditions = kept
}

// conditionTrue reports whether the HPA has condition t with status True.
func conditionTrue(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) bool {
	for _, cond := range hpa.Status.Conditions {
		if cond.Type == t {
			return cond.Status == v1.ConditionTrue
		}
	}
	return false
}
