package endpoints

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// staleTracker remembers, per Endpoints object, the resourceVersion the
// controller's last update replaced: a cache still showing it has not seen
// the update.
type staleTracker struct {
	mu       sync.Mutex
	versions map[types.NamespacedName]string
}

func newStaleTracker() *staleTracker {
	return &staleTracker{versions: map[types.NamespacedName]string{}}
}

func (t *staleTracker) mark(e *v1.Endpoints) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.versions[types.NamespacedName{Namespace: e.Namespace, Name: e.Name}] = e.ResourceVersion
}

func (t *staleTracker) isStale(e *v1.Endpoints) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	rv, ok := t.versions[types.NamespacedName{Namespace: e.Namespace, Name: e.Name}]
	return ok && rv == e.ResourceVersion
}

func (t *staleTracker) forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.versions, types.NamespacedName{Namespace: namespace, Name: name})
}

// staleCacheError says the Endpoints cache still shows the version the
// controller's last update replaced; the Service is retried with backoff.
type staleCacheError struct{ rv, key string }

func (e staleCacheError) Error() string {
	return fmt.Sprintf("endpoints informer cache is out of date, resource version %s already processed for endpoints %s", e.rv, e.key)
}

// ExpectedRetry: the worker loop requeues a stale cache quietly.
func (staleCacheError) ExpectedRetry() {}
