package daemonset

import (
	"reflect"
	"sync"

	apps "k8s.io/api/apps/v1"
)

// writtenStatuses remembers, per DaemonSet key, the resourceVersion of
// the controller's last status write, so that the update event echoing it
// causes no sync: that sync would compute the status just written, and
// whatever changed since has woken the DaemonSet itself. Upstream syncs
// every update, its own writes' echoes included.
type writtenStatuses struct {
	mu sync.Mutex
	rv map[string]string
}

func newWrittenStatuses() *writtenStatuses { return &writtenStatuses{rv: map[string]string{}} }

func (w *writtenStatuses) wrote(key, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rv[key] = rv
}

// echo reports whether cur is the echo of the last status write for key,
// and forgets the write.
func (w *writtenStatuses) echo(key string, old, cur *apps.DaemonSet) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	rv, ok := w.rv[key]
	if !ok || rv != cur.ResourceVersion {
		return false
	}
	delete(w.rv, key)
	return statusOnlyChange(old, cur)
}

func (w *writtenStatuses) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.rv, key)
}

// statusOnlyChange reports whether an update changed nothing a sync acts
// on but the status.
func statusOnlyChange(old, cur *apps.DaemonSet) bool {
	return old.UID == cur.UID && old.Generation == cur.Generation &&
		old.DeletionTimestamp.Equal(cur.DeletionTimestamp) &&
		reflect.DeepEqual(old.Labels, cur.Labels) &&
		reflect.DeepEqual(old.Annotations, cur.Annotations) &&
		reflect.DeepEqual(old.OwnerReferences, cur.OwnerReferences) &&
		reflect.DeepEqual(old.Finalizers, cur.Finalizers)
}
