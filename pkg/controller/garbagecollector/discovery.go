package garbagecollector

import (
	"context"
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
)

// resyncPeriod is how often upstream rediscovers resources (and how long it
// waits for new monitors to sync).
const resyncPeriod = 30 * time.Second

type resourceSet = map[schema.GroupVersionResource]struct{}

// deletableResources returns the preferred resources that support delete,
// list and watch. On a partial discovery failure it returns what it could
// resolve along with the error.
func deletableResources(ctx context.Context, d discovery.ServerResourcesInterface) (resourceSet, error) {
	logger := klog.FromContext(ctx)
	preferred, lookupErr := d.ServerPreferredResources()
	if lookupErr != nil {
		if failed, ok := discovery.GroupDiscoveryFailedErrorGroups(lookupErr); ok {
			logger.Info("failed to discover some groups", "groups", fmt.Sprintf("%q", failed))
		} else {
			logger.Info("failed to discover preferred resources", "error", lookupErr)
		}
	}
	out := resourceSet{}
	if preferred == nil {
		return out, lookupErr
	}
	for _, rl := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete", "list", "watch"}}, preferred) {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			logger.Info("ignoring invalid discovered resource", "groupversion", rl.GroupVersion, "error", err)
			continue
		}
		for _, r := range rl.APIResources {
			out[gv.WithResource(r.Name)] = struct{}{}
		}
	}
	return out, lookupErr
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
	if failed, ok := discovery.GroupDiscoveryFailedErrorGroups(err); ok {
		for r := range old {
			if _, f := failed[r.GroupVersion()]; f && c.monitors.synced(r) {
				found[r] = struct{}{}
			}
		}
	}
	if maps.Equal(old, found) {
		logger.V(5).Info("no resource updates from discovery, skipping garbage collector sync")
		return old
	}
	logger.V(2).Info("syncing garbage collector with updated resources from discovery", "diff", diff(old, found))
	c.mapper.Reset()
	if err := c.monitors.sync(ctx, found); err != nil {
		// As upstream: the round counts as failed and is retried whole on
		// the next tick (a resource the RESTMapper could not map yet gets
		// its monitor then), even if discovery has not changed since.
		logger.Error(err, "failed to sync resource monitors")
		resourcesSyncErrors.Inc()
		return old
	}
	syncCtx, cancel := context.WithTimeout(ctx, resyncPeriod)
	defer cancel()
	if c.monitors.waitForSync(syncCtx) {
		logger.V(2).Info("synced garbage collector")
	} else if ctx.Err() == nil {
		logger.Info("timed out waiting for dependency graph builder sync during GC sync", "unsynced", c.monitors.unsynced())
		resourcesSyncErrors.Inc()
	}
	return found
}

func diff(old, cur resourceSet) string {
	removed, added := sets.New[string](), sets.New[string]()
	for r := range old {
		if _, ok := cur[r]; !ok {
			removed.Insert(r.String())
		}
	}
	for r := range cur {
		if _, ok := old[r]; !ok {
			added.Insert(r.String())
		}
	}
	return fmt.Sprintf("added: %v, removed: %v", sets.List(added), sets.List(removed))
}
