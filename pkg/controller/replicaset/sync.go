package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// sync reconciles the owner named by key; see the package documentation.
// It is never called concurrently for one key.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	defer func() {
		logger.V(4).Info("Finished syncing", "kind", c.kind.Kind, "key", key, "duration", c.clock.Since(start))
	}()

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	if err := c.consistency.EnsureReady(nn); err != nil {
		var stale *expectations.StaleCacheError
		if errors.As(err, &stale) {
			staleSyncSkips.WithLabelValues(stale.Resource.Group, stale.Resource.Resource).Inc()
		}
		return err
	}

	rs, err := c.owners.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Deleted", "kind", c.kind.Kind, "key", key)
		c.consistency.Clear(nn, "")
		c.expectations.DeleteExpectations(logger, key)
		return nil
	}
	if err != nil {
		return err
	}

	needsManage := c.expectations.SatisfiedExpectations(logger, key)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		// Validation prevents this; retrying cannot fix it.
		utilruntime.HandleErrorWithContext(ctx, err, "Error converting pod selector", "kind", c.kind.Kind, "key", key)
		return nil
	}

	// The owner's pods and the namespace's orphans; the cache's objects,
	// never modified.
	candidates, err := controllerref.PodsByOwner(c.podIndexer, rs, c.kind.Kind, true)
	if err != nil {
		return err
	}
	activePods, err := c.claimPods(ctx, rs, selector, filterPods(candidates, podranking.IsActive))
	if err != nil {
		return err
	}
	var terminatingPods []*v1.Pod
	if c.terminatingReplicas {
		terminatingPods = filterPods(candidates, func(p *v1.Pod) bool {
			return podranking.IsTerminating(p) && metav1.IsControlledBy(p, rs) && selector.Matches(labels.Set(p.Labels))
		})
	}

	var manageErr error
	created := 0
	if needsManage && rs.DeletionTimestamp == nil {
		var deleted []*v1.Pod
		deleted, created, manageErr = c.manageReplicas(ctx, key, rs, activePods)
		activePods, terminatingPods = c.afterDeleting(activePods, terminatingPods, deleted)
	}

	// One instant for the status and for the next availability check.
	now := c.clock.Now()
	status := c.calculateStatus(rs, activePods, terminatingPods, manageErr, now)
	changed := !statusUpToDate(rs, status)
	if changed && c.waitsForPods(key, rs, status, needsManage, created) {
		// Observing the rest of the expected pods enqueues rs again.
		logger.V(4).Info("Waiting for expected pods before updating status", "kind", c.kind.Kind, "key", key)
		return manageErr
	}
	if d := c.statusSpacer.Delay(key); d > 0 && changed && progressOnly(rs, status) && !settled(rs, status) {
		// Progress only, and written less than a period ago: write it
		// when the period ends, with whatever else changed by then. A
		// status that reaches the goal is not held back: nothing will
		// follow it to gather, and an owner (or a user's rollout status)
		// waits for exactly that one.
		logger.V(4).Info("Delaying status update", "kind", c.kind.Kind, "key", key, "delay", d)
		c.queue.AddAfter(key, d)
		return manageErr
	}
	updated, err := c.updateStatus(ctx, rs, status)
	if err != nil {
		return err
	}
	if updated != rs {
		c.consistency.WroteAt(nn, rs.UID, c.resource, updated.ResourceVersion)
		c.statusSpacer.Wrote(key)
	}
	if manageErr != nil {
		return manageErr
	}
	if d, ok := c.nextAvailabilityCheck(updated, activePods, now); ok {
		c.queue.AddAfter(key, d)
	}
	return nil
}

// claimPods adopts and releases pods (see controllerref) and returns the
// owner's. Before adopting, an uncached GET makes sure the owner is still
// the same object and not being deleted.
func (c *Controller) claimPods(ctx context.Context, rs *apps.ReplicaSet, selector labels.Selector, pods []*v1.Pod) ([]*v1.Pod, error) {
	canAdopt := controllerref.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.owners.GetFresh(ctx, rs.Namespace, rs.Name)
		if err != nil {
			return nil, err
		}
		if fresh.UID != rs.UID {
			return nil, fmt.Errorf("original %v %v/%v is gone: got uid %v, wanted %v", c.kind.Kind, rs.Namespace, rs.Name, fresh.UID, rs.UID)
		}
		return fresh, nil
	})
	m := controllerref.NewPodManager(c.podControl.PatchPod, rs, c.kind, selector, canAdopt)
	return m.Claim(ctx, pods)
}

// nextAvailabilityCheck returns when to sync again so that
// availableReplicas catches up with pods that are ready but not yet
// available: when the first of them becomes available, or after
// minReadySeconds as a fallback.
func (c *Controller) nextAvailabilityCheck(rs *apps.ReplicaSet, activePods []*v1.Pod, evaluatedAt time.Time) (time.Duration, bool) {
	if rs.Spec.MinReadySeconds <= 0 || rs.Status.ReadyReplicas == rs.Status.AvailableReplicas {
		return 0, false
	}
	if d, ok := podranking.NextAvailabilityCheck(activePods, rs.Spec.MinReadySeconds, evaluatedAt, c.clock); ok {
		return d, true
	}
	return time.Duration(rs.Spec.MinReadySeconds) * time.Second, true
}

func filterPods(pods []*v1.Pod, keep func(*v1.Pod) bool) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}
