package endpointutil

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TriggerTimeTracker computes the endpoints.kubernetes.io/last-change-trigger-time
// of a Service's endpoint objects: the earliest change, since the previous
// sync of the Service, among the pods' Ready transitions and the Service's
// creation. Like upstream's, it cannot see several changes of one object
// between two syncs; the value is an approximation by design.
//
// Compute is safe for concurrent use on different Services; a workqueue
// never syncs one Service concurrently.
type TriggerTimeTracker struct {
	mu     sync.Mutex
	states map[types.NamespacedName]triggerState
}

type triggerState struct {
	service time.Time
	pods    map[string]time.Time // pod name → Ready transition time
}

// NewTriggerTimeTracker returns an empty tracker.
func NewTriggerTimeTracker() *TriggerTimeTracker {
	return &TriggerTimeTracker{states: map[types.NamespacedName]triggerState{}}
}

// Compute records the pods' and the Service's trigger times and returns the
// value to write: the Service's creationTimestamp on its first sync, else
// the earliest trigger time that moved since the last sync, or the zero
// time when none did (the annotation is then removed).
func (t *TriggerTimeTracker) Compute(svc *v1.Service, pods []*v1.Pod) time.Time {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	t.mu.Lock()
	prev, known := t.states[key]
	t.mu.Unlock()

	var earliest time.Time
	consider := func(tt time.Time) {
		if earliest.IsZero() || tt.Before(earliest) {
			earliest = tt
		}
	}
	next := triggerState{service: svc.CreationTimestamp.Time, pods: make(map[string]time.Time, len(pods))}
	for _, pod := range pods {
		c := PodReadyCondition(&pod.Status)
		if c == nil || c.LastTransitionTime.IsZero() {
			continue
		}
		tt := c.LastTransitionTime.Time
		next.pods[pod.Name] = tt
		if tt.After(prev.pods[pod.Name]) {
			consider(tt)
		}
	}
	if next.service.After(prev.service) {
		consider(next.service)
	}

	t.mu.Lock()
	t.states[key] = next
	t.mu.Unlock()
	if !known {
		return svc.CreationTimestamp.Time
	}
	return earliest
}

// Delete forgets a Service.
func (t *TriggerTimeTracker) Delete(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, types.NamespacedName{Namespace: namespace, Name: name})
}
