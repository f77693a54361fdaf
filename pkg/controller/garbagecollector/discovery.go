package garbagecollector

import (
	"context"
	"maps"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/resourcemonitor"
)

// resyncPeriod is how often upstream rediscovers resources (and how long it
// waits for new monitors to sync).
const resyncPeriod = 30 * time.Second

type resourceSet = resourcemonitor.Set

// deletableResources returns the preferred resources that support delete,
// list and watch. On a partial discovery failure it returns what it could
// resolve along with the error.
func deletableResources(ctx context.Context, d discovery.ServerResourcesInterface) (resourceSet, error) {
	return resourcemonitor.Discover(ctx, d, resourcemonitor.AllScopes, "delete", "list", "watch")
}

// rediscover runs every resyncPeriod: when the deletable resources
// changed it resets the RESTMapper and starts and stops monitors. Resources
// of groups whose discovery failed are kept while their monitor is synced.
func (c *Controller) rediscover(ctx context.Context) {
	var old resourceSet
	ticker := c.clock.NewTicker(resyncPeriod)
	defer ticker.Stop()
	for {
		old = c.syncResources(ctx, old)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

func (c *Controller) syncResources(ctx context.Context, old resourceSet) resourceSet {
	logger := klog.FromContext(ctx)
	found, err := deletableResources(ctx, c.discovery)
	if len(found) == 0 {
		logger.V(2).Info("no resources reported by discovery, skipping garbage collector sync")
		resourcesSyncErrors.Inc()
		return old
	}
	resourcemonitor.KeepFailedGroups(found, old, err, c.monitors.Synced)
	if maps.Equal(old, found) {
		logger.V(5).Info("no resource updates from discovery, skipping garbage collector sync")
		return old
	}
	logger.V(2).Info("syncing garbage collector with updated resources from discovery", "diff", resourcemonitor.Diff(old, found))
	c.mapper.Reset()
	if err := c.monitors.Sync(ctx, found); err != nil {
		// As upstream: the round counts as failed and is retried whole on
		// the next tick (a resource the RESTMapper could not map yet gets
		// its monitor then), even if discovery has not changed since.
		logger.Error(err, "failed to sync resource monitors")
		resourcesSyncErrors.Inc()
		return old
	}
	syncCtx, cancel := context.WithTimeout(ctx, resyncPeriod)
	defer cancel()
	if c.monitors.WaitForSync(syncCtx) {
		logger.V(2).Info("synced garbage collector")
	} else if ctx.Err() == nil {
		logger.Info("timed out waiting for dependency graph builder sync during GC sync", "unsynced", c.monitors.Unsynced())
		resourcesSyncErrors.Inc()
	}
	return found
}
