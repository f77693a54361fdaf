package statefulset

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// Pod states as the StatefulSet controller sees them.

// isCreated reports whether the API server holds the pod: a pod built by
// the controller but not created yet has no phase.
func isCreated(pod *v1.Pod) bool { return pod.Status.Phase != "" }

func isPending(pod *v1.Pod) bool { return pod.Status.Phase == v1.PodPending }

// isTerminal reports a Failed or Succeeded pod: either is replaced.
func isTerminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodFailed || pod.Status.Phase == v1.PodSucceeded
}

func isTerminating(pod *v1.Pod) bool { return pod.DeletionTimestamp != nil }

func isRunningAndReady(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodRunning && podranking.IsReady(pod)
}

// isAvailable reports a pod ready for minReadySeconds at now.
func isAvailable(pod *v1.Pod, minReadySeconds int32, now time.Time) bool {
	return podranking.IsAvailable(pod, minReadySeconds, now)
}

// isUnavailable reports a pod not available at now, or being deleted.
func isUnavailable(pod *v1.Pod, minReadySeconds int32, now time.Time) bool {
	return !isAvailable(pod, minReadySeconds, now) || isTerminating(pod)
}
