package deployment

import (
	"sync"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// writtenDeployments remembers, per key, the Deployment as the API server
// returned it from the controller's last write, until the informer has
// caught up with it. A sync that would otherwise start from the older
// cached copy - because a ReplicaSet event woke it right after the write -
// starts from the written one instead, instead of computing a status the
// API server would refuse with a conflict. Entries live only for the
// moments the cache lags, so they cost no memory in a steady state.
type writtenDeployments struct {
	mu sync.Mutex
	m  map[string]*apps.Deployment
}

// record keeps d, the API server's answer to a write of key.
func (w *writtenDeployments) record(key string, d *apps.Deployment) {
	d.ManagedFields = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*apps.Deployment{}
	}
	w.m[key] = d
}

// newest returns the written copy of key if it is newer than cached (nil
// when the cache has none), else cached; it forgets the written copy once
// the cache has caught up with it or the object is gone.
func (w *writtenDeployments) newest(key string, cached *apps.Deployment) *apps.Deployment {
	w.mu.Lock()
	defer w.mu.Unlock()
	written, ok := w.m[key]
	if !ok {
		return cached
	}
	if cached != nil && written.UID == cached.UID {
		if cmp, err := resourceversion.CompareResourceVersion(written.ResourceVersion, cached.ResourceVersion); err == nil && cmp > 0 {
			return written
		}
	}
	delete(w.m, key)
	return cached
}
