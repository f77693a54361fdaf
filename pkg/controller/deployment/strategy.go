package deployment

import (
	"fmt"
	"math"
	"strconv"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The rolling-update arithmetic: how far above spec.replicas a rollout may
// go (maxSurge, percentages rounded up) and how far below it (maxUnavailable,
// percentages rounded down), with at least one of them non-zero.

func isRollingUpdate(d *apps.Deployment) bool {
	return d.Spec.Strategy.Type == apps.RollingUpdateDeploymentStrategyType
}

// desired is spec.replicas.
func desired(d *apps.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 0
	}
	return *d.Spec.Replicas
}

// resolveFenceposts scales maxSurge and maxUnavailable (nil counts as 0)
// to desired replicas. When both come out 0, maxUnavailable becomes 1 so
// that a rollout can make progress.
func resolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	surge, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxSurge, intstr.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxUnavailable, intstr.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

// maxSurge is the number of replicas a rolling update may run above
// spec.replicas; 0 for Recreate or an invalid value.
func maxSurge(d *apps.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	surge, _, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, desired(d))
	return surge
}

// maxUnavailable is the number of replicas a rolling update may run below
// spec.replicas, at most spec.replicas; 0 for Recreate, for zero replicas
// or an invalid value.
func maxUnavailable(d *apps.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil || desired(d) == 0 {
		return 0
	}
	_, unavailable, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, desired(d))
	return min(unavailable, desired(d))
}

// maxReplicas is what the max-replicas annotation records: spec.replicas
// plus maxSurge.
func maxReplicas(d *apps.Deployment) int32 {
	return desired(d) + maxSurge(d)
}

// newRSNewReplicas is the size the new ReplicaSet should grow to now: for
// a rolling update, as far as maxSurge allows without exceeding
// spec.replicas; for Recreate, spec.replicas at once.
func newRSNewReplicas(d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case apps.RollingUpdateDeploymentStrategyType:
		var surgeValue *intstr.IntOrString
		if d.Spec.Strategy.RollingUpdate != nil {
			surgeValue = d.Spec.Strategy.RollingUpdate.MaxSurge
		}
		surge, err := intstr.GetScaledValueFromIntOrPercent(surgeValue, int(desired(d)), true)
		if err != nil {
			return 0, err
		}
		current := specReplicas(allRSs)
		maxTotal := desired(d) + int32(surge)
		if current >= maxTotal {
			// Cannot scale up.
			return replicas(newRS), nil
		}
		up := min(maxTotal-current, desired(d)-replicas(newRS))
		return replicas(newRS) + up, nil
	case apps.RecreateDeploymentStrategyType:
		return desired(d), nil
	default:
		return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
	}
}

// isSaturated reports whether rs runs all of spec.replicas, available,
// and was sized for the current spec.replicas.
func isSaturated(d *apps.Deployment, rs *apps.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	want, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	return replicas(rs) == desired(d) && int32(want) == desired(d) && rs.Status.AvailableReplicas == desired(d)
}

// hasProgressDeadline reports whether progressDeadlineSeconds is set to
// something other than "never" (MaxInt32).
func hasProgressDeadline(d *apps.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// hasRevisionHistoryLimit reports whether old ReplicaSets are to be cleaned
// up at all.
func hasRevisionHistoryLimit(d *apps.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}
