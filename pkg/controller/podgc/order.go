package podgc

import (
	"sort"

	v1 "k8s.io/api/core/v1"
)

// evictedReason is the status reason the kubelet's eviction manager sets.
const evictedReason = "Evicted"

// isTerminated reports whether a pod's phase is final (neither Pending,
// Running nor Unknown), as upstream decides it.
func isTerminated(pod *v1.Pod) bool {
	switch pod.Status.Phase {
	case v1.PodPending, v1.PodRunning, v1.PodUnknown:
		return false
	}
	return true
}

// terminatedOverThreshold returns the terminated pods to delete so that at
// most threshold remain, in deletion order: evicted first, then oldest by
// creation time, names breaking ties. pods is not reordered.
func terminatedOverThreshold(pods []*v1.Pod, threshold int) []*v1.Pod {
	var terminated []*v1.Pod
	for _, pod := range pods {
		if isTerminated(pod) {
			terminated = append(terminated, pod)
		}
	}
	n := len(terminated) - threshold
	if n <= 0 {
		return nil
	}
	sort.Sort(byEvictionAndCreationTimestamp(terminated))
	return terminated[:n]
}

// byEvictionAndCreationTimestamp orders evicted pods first, so that
// terminated pods of controllers are kept longest, then by creation time
// and name.
type byEvictionAndCreationTimestamp []*v1.Pod

func (o byEvictionAndCreationTimestamp) Len() int      { return len(o) }
func (o byEvictionAndCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }

func (o byEvictionAndCreationTimestamp) Less(i, j int) bool {
	iEvicted, jEvicted := isEvicted(o[i]), isEvicted(o[j])
	if iEvicted != jEvicted {
		return iEvicted
	}
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

func isEvicted(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodFailed && pod.Status.Reason == evictedReason
}
