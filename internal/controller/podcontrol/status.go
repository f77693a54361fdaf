package podcontrol

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// StatusPatch returns the two-way strategic merge patch of a pod's status
// subresource from pod.Status to status, with the pod's UID as a
// precondition, or nil when status changes nothing. Computed from both
// states, it keeps the conditions' order ($setElementOrder) as an update
// would; a patch naming only a new condition would put it first.
func StatusPatch(pod *v1.Pod, status *v1.PodStatus) ([]byte, error) {
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID}, Status: *status})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("creating the status patch of pod %q/%q: %w", pod.Namespace, pod.Name, err)
	}
	if bytes.Equal(patch, []byte(fmt.Sprintf(`{"metadata":{"uid":%q}}`, pod.UID))) {
		return nil, nil
	}
	return patch, nil
}

// SetCondition sets cond in status in place, or appends it, as upstream's
// UpdatePodCondition: the transition time is now unless the condition's
// status stays the same, which keeps the old one. It reports whether the
// condition changed, comparing what upstream compares (not
// observedGeneration).
func SetCondition(status *v1.PodStatus, cond v1.PodCondition, now metav1.Time) bool {
	cond.LastTransitionTime = now
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		same := old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message &&
			old.LastProbeTime.Equal(&cond.LastProbeTime) && old.LastTransitionTime.Equal(&cond.LastTransitionTime)
		*old = cond
		return !same
	}
	status.Conditions = append(status.Conditions, cond)
	return true
}
