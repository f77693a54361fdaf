package disruption

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// disrupted is the outcome of checking a budget's disruptedPods.
type disrupted struct {
	// pods are the entries to keep: selected pods not yet deleting whose
	// eviction was admitted less than DeletionTimeout ago.
	pods map[string]metav1.Time
	// expired are the selected pods, not deleting, whose entry is older:
	// they were expected to be deleted and were not.
	expired []*v1.Pod
	// recheck is when the first kept entry expires (nil: none kept).
	recheck *time.Time
}

// checkDisrupted keeps the entries of current that still name a selected
// pod that is not being deleted, until their DeletionTimeout. Entries of
// pods no longer selected or gone are dropped.
func checkDisrupted(current map[string]metav1.Time, pods []*v1.Pod, now time.Time) disrupted {
	d := disrupted{pods: map[string]metav1.Time{}}
	if current == nil {
		return d
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, found := current[pod.Name]
		if !found {
			continue
		}
		deadline := at.Add(DeletionTimeout)
		if deadline.Before(now) {
			d.expired = append(d.expired, pod)
			continue
		}
		if d.recheck == nil || deadline.Before(*d.recheck) {
			d.recheck = &deadline
		}
		d.pods[pod.Name] = at
	}
	return d
}

// countHealthy counts the Ready pods that are neither being deleted nor
// disrupted less than DeletionTimeout ago.
func countHealthy(pods []*v1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, found := disrupted[pod.Name]; found && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if isReady(pod) {
			n++
		}
	}
	return n
}

// isReady reports whether the pod's Ready condition is True.
func isReady(pod *v1.Pod) bool {
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
