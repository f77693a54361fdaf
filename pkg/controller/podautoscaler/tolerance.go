package podautoscaler

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Tolerances are how far below and above 1.0 the usage ratio may be
// without changing the replica count.
type Tolerances struct {
	scaleDown float64
	scaleUp   float64
}

func (t Tolerances) String() string {
	return fmt.Sprintf("[down:%.1f%%, up:%.1f%%]", t.scaleDown*100., t.scaleUp*100.)
}

// isWithin reports whether ratio is close enough to 1.0 to keep the
// replica count.
func (t Tolerances) isWithin(ratio float64) bool {
	return (1.0-t.scaleDown) <= ratio && ratio <= (1.0+t.scaleUp)
}

// tolerancesFor returns the HPA's tolerances: the
// --horizontal-pod-autoscaler-tolerance flag's, overridden per direction
// by spec.behavior's (HPAConfigurableTolerance, GA and locked on in v1.37).
func (c *Controller) tolerancesFor(hpa *autoscalingv2.HorizontalPodAutoscaler) Tolerances {
	t := Tolerances{c.tolerance, c.tolerance}
	b := hpa.Spec.Behavior
	if b == nil || !c.configurableTolerance {
		return t
	}
	if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
		t.scaleDown = b.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
		t.scaleUp = b.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}
