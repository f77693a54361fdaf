package daemonset

import (
	apps "k8s.io/api/apps/v1"
	intstrutil "k8s.io/apimachinery/pkg/util/intstr"
)

// surgeCount returns how many nodes may run an extra pod during a rolling
// update: 0 unless the strategy is RollingUpdate with maxSurge, else
// maxSurge of numberToSchedule, percentages rounded up.
func surgeCount(ds *apps.DaemonSet, numberToSchedule int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != apps.RollingUpdateDaemonSetStrategyType || r == nil || r.MaxSurge == nil {
		return 0, nil
	}
	return intstrutil.GetScaledValueFromIntOrPercent(r.MaxSurge, numberToSchedule, true)
}

// unavailableCount returns how many nodes may be without an available pod
// during a rolling update: 0 unless the strategy is RollingUpdate, else
// maxUnavailable of numberToSchedule, percentages rounded up.
func unavailableCount(ds *apps.DaemonSet, numberToSchedule int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != apps.RollingUpdateDaemonSetStrategyType || r == nil {
		return 0, nil
	}
	return intstrutil.GetScaledValueFromIntOrPercent(r.MaxUnavailable, numberToSchedule, true)
}

// allowsSurge reports whether the DaemonSet may run two pods on a node (a
// new one beside an old one) during a rolling update.
func allowsSurge(ds *apps.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n > 0
}
