package persistentvolume

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// podsUsingClaim returns the cached pods whose volumes name the claim
// (namespace/name key), by name: the index's order is a set's, and names
// make Events deterministic.
func (c *Controller) podsUsingClaim(key string) ([]*v1.Pod, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	pods, err := storageutil.PodsUsingClaim(c.podIndexer, namespace, name)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}
