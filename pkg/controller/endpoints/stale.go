package endpoints

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcm-dev/kcm/internal/controller"
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

// staleCache says the Endpoints cache still shows the version rv the
// controller's last update of key replaced; the Service is retried with
// backoff.
func staleCache(rv, key string) error {
	return controller.StaleCache(fmt.Sprintf("endpoints informer cache is out of date, resource version %s already processed for endpoints %s", rv, key))
}
