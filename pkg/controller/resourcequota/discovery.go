package resourcequota

import (
	"context"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/resourcemonitor"
)

// discoveryPeriod is how often upstream rediscovers the resources quota
// follows (and how long it waits for new monitors to sync).
const discoveryPeriod = 30 * time.Second

// quotableVerbs are the verbs a resource needs to be counted.
var quotableVerbs = []string{"create", "list", "watch", "delete"}

// rediscover runs every discoveryPeriod: it follows the resources
// discovery reports, and queues every quota again once caches that had
// not synced (new resources' among them) have.
func (c *Controller) rediscover(ctx context.Context, old resourcemonitor.Set) {
	ticker := c.clock.NewTicker(discoveryPeriod)
	defer ticker.Stop()
	unsynced := c.unsynced()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
		old = c.syncResources(ctx, old)
		now := c.unsynced()
		for _, r := range unsynced {
			if !slices.Contains(now, r) {
				klog.FromContext(ctx).V(2).Info("Resource quota monitors synced, recalculating every quota", "resource", r)
				c.enqueueAll(ctx)
				break
			}
		}
		unsynced = now
	}
}

// syncResources starts monitors for the quotable resources discovery
// reports (keeping those of groups whose discovery failed) and stops those
// of resources gone, whose object count evaluators go with them. It
// returns the resources now followed. When resources were added it waits
// (at most discoveryPeriod) for their monitors and queues every quota, so
// that limits on them are measured without waiting for the next full
// recalculation.
func (c *Controller) syncResources(ctx context.Context, old resourcemonitor.Set) resourcemonitor.Set {
	logger := klog.FromContext(ctx)
	found, err := resourcemonitor.Discover(ctx, c.discovery, resourcemonitor.NamespacedOnly, quotableVerbs...)
	if len(found) == 0 {
		logger.Error(err, "Error during resource discovery")
		return old
	}
	resourcemonitor.KeepFailedGroups(found, old, err, nil)
	if maps.Equal(old, found) {
		logger.V(4).Info("no resource updates from discovery, skipping resource quota sync")
		return old
	}
	logger.V(2).Info("syncing resource quota controller with updated resources from discovery", "diff", resourcemonitor.Diff(old, found))
	if err := c.monitors.Sync(ctx, found); err != nil {
		// Retried whole on the next tick, as upstream.
		logger.Error(err, "Failed to sync resource monitors")
		return old
	}
	c.dropCountEvaluators(old, found)
	if old == nil || !hasNew(old, found) {
		return found
	}
	syncCtx, cancel := context.WithTimeout(ctx, discoveryPeriod)
	defer cancel()
	if c.monitors.WaitForSync(syncCtx) {
		logger.V(2).Info("synced quota controller")
		c.enqueueAll(ctx)
	} else if ctx.Err() == nil {
		logger.Info("Timed out waiting for quota monitor sync", "unsynced", c.monitors.Unsynced())
	}
	return found
}

// dropCountEvaluators removes the object count evaluators of resources
// discovery no longer reports in any version.
func (c *Controller) dropCountEvaluators(old, found resourcemonitor.Set) {
	kept := map[schema.GroupResource]bool{}
	for r := range found {
		kept[r.GroupResource()] = true
	}
	for r := range old {
		gr := r.GroupResource()
		if !kept[gr] && !c.builtIn(gr) {
			c.registry.Remove(gr)
		}
	}
}

func hasNew(old, found resourcemonitor.Set) bool {
	for r := range found {
		if _, ok := old[r]; !ok {
			return true
		}
	}
	return false
}

// enqueueAll queues every quota for a full recalculation.
func (c *Controller) enqueueAll(ctx context.Context) {
	logger := klog.FromContext(ctx)
	quotas, err := c.lister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Unable to enqueue all - error listing resource quotas")
		return
	}
	for _, q := range quotas {
		c.enqueue(logger, c.queue, q)
	}
	logger.V(4).Info("Resource quota controller queued all resource quota for full calculation of usage")
}
