package statefulset

import (
	"reflect"
	"sync"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Status writes are held back in two cases (docs/ARCHITECTURE.md, "Write
// policies"); the status is then written by a later sync, which the hold
// schedules, and the pods are created and deleted as at once:
//
//   - while pods this controller created are not in the cache yet: the
//     status would miss them, and their arrival syncs the set again at
//     once (a new set's first status, and every scale-up's, is then one
//     write where upstream makes two);
//   - a status that only reports progress (counters), less than
//     StatusSpacing after the set's previous status write, is written when
//     the period ends, with whatever changed by then.
//
// A status that reaches the goal, or raises the collision count, is never
// held.

const (
	// StatusSpacing is the period of progress-only status writes.
	StatusSpacing = time.Second
	// creationWait bounds how long a status write waits for the cache to
	// show a pod the controller created.
	creationWait = 5 * time.Second
)

// creations remembers, per set key, the pods the controller created
// (name → UID and when) until the cache shows them.
type creations struct {
	mu sync.Mutex
	m  map[string]map[string]createdPod
}

type createdPod struct {
	uid types.UID
	at  time.Time
}

func (cr *creations) add(key string, pod *v1.Pod, now time.Time) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.m == nil {
		cr.m = map[string]map[string]createdPod{}
	}
	if cr.m[key] == nil {
		cr.m[key] = map[string]createdPod{}
	}
	cr.m[key][pod.Name] = createdPod{uid: pod.UID, at: now}
}

// pending drops the creations of key that pods (the set's pods in the
// cache) show or that are older than creationWait, and returns how long
// the oldest remaining one may still be waited for; 0 if none remains.
func (cr *creations) pending(key string, pods []*v1.Pod, now time.Time) time.Duration {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	created := cr.m[key]
	if len(created) == 0 {
		return 0
	}
	for _, pod := range pods {
		if c, ok := created[pod.Name]; ok && c.uid == pod.UID {
			delete(created, pod.Name)
		}
	}
	var wait time.Duration
	for name, c := range created {
		left := c.at.Add(creationWait).Sub(now)
		if left <= 0 {
			delete(created, name)
			continue
		}
		wait = max(wait, left)
	}
	if len(created) == 0 {
		delete(cr.m, key)
	}
	return wait
}

func (cr *creations) forget(key string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	delete(cr.m, key)
}

// statusHold returns how long the write of status for set must wait; 0
// writes it now.
func (c *Controller) statusHold(set *apps.StatefulSet, status *apps.StatefulSetStatus, pods []*v1.Pod) time.Duration {
	// A raised collision count must be kept, and statusChanged does not
	// see it (as upstream's comparison does not).
	if settled(set, status) || ptr.Deref(status.CollisionCount, 0) != ptr.Deref(set.Status.CollisionCount, 0) {
		return 0
	}
	key := setKey(set)
	if d := c.creations.pending(key, pods, c.clock.Now()); d > 0 {
		return d
	}
	if progressOnly(set, status) {
		return c.statusSpacer.Delay(key)
	}
	return 0
}

// progressOnly reports whether status differs from set's in counters only.
func progressOnly(set *apps.StatefulSet, status *apps.StatefulSetStatus) bool {
	old := &set.Status
	return status.ObservedGeneration == old.ObservedGeneration &&
		status.CurrentRevision == old.CurrentRevision &&
		status.UpdateRevision == old.UpdateRevision &&
		reflect.DeepEqual(status.Conditions, old.Conditions)
}

// settled reports whether status shows the set where its spec wants
// it: every replica there, ready and available, and the update as far as
// the strategy takes it (complete, or down to the partition).
func settled(set *apps.StatefulSet, status *apps.StatefulSetStatus) bool {
	want := *set.Spec.Replicas
	if status.Replicas != want || status.ReadyReplicas != want || status.AvailableReplicas != want {
		return false
	}
	switch {
	case status.CurrentRevision == status.UpdateRevision:
		return status.UpdatedReplicas == want
	case set.Spec.UpdateStrategy.Type == apps.OnDeleteStatefulSetStrategyType:
		return true
	case set.Spec.UpdateStrategy.Type == apps.RollingUpdateStatefulSetStrategyType:
		return status.UpdatedReplicas == max(0, want-int32(partition(set)))
	}
	return false
}

func setKey(set *apps.StatefulSet) string { return set.Namespace + "/" + set.Name }
