package podautoscaler

import (
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// targetSelector parses the target's pod selector (from its scale) and
// checks that no other HPA scales any of its pods. Failures set
// ScalingActive False and record an Event.
func (c *Controller) targetSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		c.recorder.Event(hpa, v1.EventTypeWarning, "SelectorRequired", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(hpa, v1.EventTypeWarning, "InvalidSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "InvalidSelector", msg)
		return nil, errors.New(msg)
	}
	if !c.selectors.putIfPresent(types.NamespacedName{Namespace: hpa.Namespace, Name: hpa.Name}, parsed) {
		return nil, fmt.Errorf("HPA %s/%s was deleted during reconciliation", hpa.Namespace, hpa.Name)
	}
	pods, err := c.podLister.Pods(hpa.Namespace).List(parsed)
	if err != nil {
		return nil, err
	}
	if hpas := c.selectors.matching(hpa.Namespace, pods, 2); len(hpas) > 1 {
		msg := fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. %v)", selector, hpas)
		c.recorder.Event(hpa, v1.EventTypeWarning, "AmbiguousSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "AmbiguousSelector", msg)
		return nil, errors.New(msg)
	}
	return parsed, nil
}
