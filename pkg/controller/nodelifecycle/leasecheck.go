package nodelifecycle

import (
	"context"
	"fmt"
	"sync"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/kubernetes"
)

// leaseCacheStaleError says the Lease cache is older than the API server's
// Leases, so an expired-looking Lease may have been renewed meanwhile.
type leaseCacheStaleError struct {
	readRV, liveRV string
}

func (e *leaseCacheStaleError) Error() string {
	return fmt.Sprintf("read version: %s is not as new as written version: %s for group resource leases.coordination.k8s.io", e.readRV, e.liveRV)
}

// rvSource is the Lease informer's store, which knows the newest
// resourceVersion it has synced.
type rvSource interface {
	LastStoreSyncResourceVersion() string
}

// leaseGuard is the NodeControllerLeaseCircuitBreaker: before the controller
// declares a node's kubelet gone, it reads the node's Lease from the API
// server; if that is newer than the cached one, the cache is behind and no
// node's health is trusted until the Lease informer has caught up.
type leaseGuard struct {
	client kubernetes.Interface
	store  rvSource

	mu sync.Mutex
	// waitRV is the Lease resourceVersion the cache must reach; "" when
	// nothing is awaited.
	waitRV string
}

// ready returns an error while the Lease cache has not reached a
// resourceVersion seen live. Like upstream, it cannot tell when the store
// reports no resourceVersion (client-go's AtomicFIFO gate off), and then
// trusts the cache.
func (g *leaseGuard) ready() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waitRV == "" {
		return nil
	}
	readRV := g.store.LastStoreSyncResourceVersion()
	if readRV == "" {
		return nil
	}
	if cmp, err := resourceversion.CompareResourceVersion(g.waitRV, readRV); err == nil && cmp > 0 {
		return &leaseCacheStaleError{readRV: readRV, liveRV: g.waitRV}
	}
	g.waitRV = ""
	return nil
}

func (g *leaseGuard) await(rv string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waitRV != "" {
		if cmp, err := resourceversion.CompareResourceVersion(g.waitRV, rv); err == nil && cmp >= 0 {
			return
		}
	}
	g.waitRV = rv
}

// confirmExpired reads the node's Lease from the API server and returns an
// error unless it is the cached one (or there is none): only then may the
// node be declared gone.
func (g *leaseGuard) confirmExpired(ctx context.Context, nodeName string, cached *coordv1.Lease) error {
	live, err := g.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error looking up lease to verify node %s: %w", nodeName, err)
	}
	var cachedRV string
	if cached != nil {
		cachedRV = cached.ResourceVersion
	}
	if live.ResourceVersion != cachedRV {
		g.await(live.ResourceVersion)
		return &leaseCacheStaleError{readRV: cachedRV, liveRV: live.ResourceVersion}
	}
	return nil
}
