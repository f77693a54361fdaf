package podranking

import (
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// DeletionCostAnnotation lets users rank pods for scale-down: lower costs
// are deleted first.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// IsActive reports whether a pod counts as a replica: neither Succeeded nor
// Failed, and not being deleted.
func IsActive(p *v1.Pod) bool {
	return p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && p.DeletionTimestamp == nil
}

// IsTerminating reports whether a pod is being deleted but has not reached
// a terminal phase.
func IsTerminating(p *v1.Pod) bool {
	return p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && p.DeletionTimestamp != nil
}

// ReadyCondition returns the pod's Ready condition, or nil.
func ReadyCondition(status *v1.PodStatus) *v1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == v1.PodReady {
			return &status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the pod's Ready condition is True.
func IsReady(p *v1.Pod) bool {
	c := ReadyCondition(&p.Status)
	return c != nil && c.Status == v1.ConditionTrue
}

// IsAvailable reports whether the pod has been ready for at least
// minReadySeconds at now.
func IsAvailable(p *v1.Pod, minReadySeconds int32, now time.Time) bool {
	if !IsReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	c := ReadyCondition(&p.Status)
	return !c.LastTransitionTime.IsZero() &&
		!c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).After(now)
}

// untilAvailable returns how long after now the ready pod becomes
// available, or false if it is not ready, has no ready time, or is
// available already.
func untilAvailable(p *v1.Pod, minReadySeconds int32, now time.Time) (time.Duration, bool) {
	if minReadySeconds <= 0 || !IsReady(p) {
		return 0, false
	}
	c := ReadyCondition(&p.Status)
	if c.LastTransitionTime.IsZero() {
		return 0, false
	}
	d := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
	return d, d > 0
}

// NextAvailabilityCheck returns when the owner's availability must be
// evaluated again: when the first of pods that was ready but not available
// at evaluatedAt (the time the owner's status was computed) becomes
// available. The delay is measured from clk's now, and is zero if that
// moment has passed since. It returns false if no pod is waiting.
func NextAvailabilityCheck(pods []*v1.Pod, minReadySeconds int32, evaluatedAt time.Time, clk clock.PassiveClock) (time.Duration, bool) {
	var first *v1.Pod
	var min time.Duration
	for _, p := range pods {
		if d, ok := untilAvailable(p, minReadySeconds, evaluatedAt); ok && (first == nil || d < min) {
			first, min = p, d
		}
	}
	if first == nil {
		return 0, false
	}
	if d, ok := untilAvailable(first, minReadySeconds, clk.Now()); ok {
		return d, true
	}
	return 0, true
}

// DeletionCost returns the pod's controller.kubernetes.io/pod-deletion-cost,
// or 0 when it is unset or not a canonical int32 ("+1" and "01" are not).
func DeletionCost(p *v1.Pod) int32 {
	s, ok := p.Annotations[DeletionCostAnnotation]
	if !ok || !validFirstDigit(s) {
		return 0
	}
	i, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0
	}
	return int32(i)
}

func validFirstDigit(s string) bool {
	if s == "" {
		return false
	}
	return s[0] == '-' || s == "0" || (s[0] >= '1' && s[0] <= '9')
}

// readyTime returns when a ready pod became ready; zero if it is not ready.
func readyTime(p *v1.Pod) time.Time {
	if c := ReadyCondition(&p.Status); c != nil && c.Status == v1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// maxRestarts returns the highest restart count among the pod's regular
// containers and among its sidecars (init containers that always restart).
func maxRestarts(p *v1.Pod) (regular, sidecar int32) {
	for _, c := range p.Status.ContainerStatuses {
		regular = max(regular, c.RestartCount)
	}
	for _, s := range p.Status.InitContainerStatuses {
		if isSidecar(p, s.Name) {
			sidecar = max(sidecar, s.RestartCount)
		}
	}
	return regular, sidecar
}

func isSidecar(p *v1.Pod, name string) bool {
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		}
	}
	return false
}
