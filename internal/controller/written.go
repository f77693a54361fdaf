package controller

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Written remembers, per key, an object as the API server returned it
// from the controller's last write, until the informer has caught up with
// it. A sync woken right after the write (by an event of a dependent
// object) starts from the written copy instead of the older cached one,
// so it neither repeats what the write did nor computes a status the API
// server refuses with a conflict. Entries live only while the cache lags.
// The zero value is ready to use.
type Written[E any, P interface {
	*E
	metav1.Object
}] struct {
	mu sync.Mutex
	m  map[string]P
}

// Record keeps obj, the API server's answer to a write of key (its
// managedFields dropped: nothing reads them).
func (w *Written[E, P]) Record(key string, obj P) {
	obj.SetManagedFields(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]P{}
	}
	w.m[key] = obj
}

// Newest returns the written copy of key if it is newer than cached (nil
// when the cache has none), else cached; it forgets the written copy once
// the cache has caught up with it, holds another object, or has none.
func (w *Written[E, P]) Newest(key string, cached P) P {
	w.mu.Lock()
	defer w.mu.Unlock()
	written, ok := w.m[key]
	if !ok {
		return cached
	}
	if cached != nil && written.GetUID() == cached.GetUID() {
		if cmp, err := resourceversion.CompareResourceVersion(written.GetResourceVersion(), cached.GetResourceVersion()); err == nil && cmp > 0 {
			return written
		}
	}
	delete(w.m, key)
	return cached
}

// Forget drops key (its object is gone).
func (w *Written[E, P]) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
