package pvcprotection

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
)

// usesFunc reports whether pod counts as a user of pvc for one purpose.
type usesFunc func(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) bool

// blocksDeletion: a scheduled pod naming the claim in a
// persistentVolumeClaim volume, or in a generic ephemeral volume whose
// claim is the pod's own, unless the pod was shut down.
func blocksDeletion(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if vol.Ephemeral != nil && !podShutDown(pod) && ownEphemeralClaim(pod, vol, pvc) {
			return true
		}
	}
	return false
}

// keepsUsed: a pod that has not terminated and names the claim, scheduled
// or not (the Unused condition).
func keepsUsed(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) bool {
	if podTerminated(pod) {
		return false
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if vol.Ephemeral != nil && ownEphemeralClaim(pod, vol, pvc) {
			return true
		}
	}
	return false
}

func ownEphemeralClaim(pod *v1.Pod, vol *v1.Volume, pvc *v1.PersistentVolumeClaim) bool {
	return ephemeral.VolumeClaimName(pod, vol) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil
}

// podShutDown: the kubelet is done with the pod (it was deleted with a zero
// grace period, by the kubelet or by force). Counting it as a user could
// deadlock a pod finalizer waiting for the claim to go.
func podShutDown(pod *v1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}

// podTerminated is upstream's volume util IsPodTerminated: the pod
// succeeded or failed, or it is being deleted and none of its containers
// runs.
func podTerminated(pod *v1.Pod) bool {
	s := &pod.Status
	return s.Phase == v1.PodFailed || s.Phase == v1.PodSucceeded ||
		(pod.DeletionTimestamp != nil && notRunning(s.InitContainerStatuses) && notRunning(s.ContainerStatuses) && notRunning(s.EphemeralContainerStatuses))
}

func notRunning(statuses []v1.ContainerStatus) bool {
	for _, st := range statuses {
		if st.State.Terminated == nil && st.State.Waiting == nil {
			return false
		}
	}
	return true
}
