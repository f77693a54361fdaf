package deployment

import (
	"context"
	"fmt"
	"slices"

	apps "k8s.io/api/apps/v1"
	"k8s.io/klog/v2"
)

// rolloutRolling moves replicas from the old ReplicaSets to the new one,
// one step per sync: first it grows the new ReplicaSet as far as maxSurge
// allows; if it could not, it shrinks old ones as far as maxUnavailable
// allows; when the rollout is complete, it cleans up old ReplicaSets.
func (c *Controller) rolloutRolling(ctx context.Context, s *syncState) error {
	d := s.d
	newRS, oldRSs, err := c.replicaSets(ctx, s, true)
	if err != nil {
		return err
	}
	allRSs := append(slices.Clip(oldRSs), newRS)

	scaledUp, err := c.reconcileNewReplicaSet(ctx, d, allRSs, newRS)
	if err != nil {
		return err
	}
	if scaledUp {
		// Wait for the new replicas before taking old ones away.
		return c.syncRolloutStatus(ctx, d, allRSs, newRS)
	}
	scaledDown, err := c.reconcileOldReplicaSets(ctx, s, allRSs, filterActive(oldRSs), newRS)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, d, allRSs, newRS)
	}
	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupOldReplicaSets(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, allRSs, newRS)
}

// reconcileNewReplicaSet grows (or, above spec.replicas, shrinks) the new
// ReplicaSet and reports whether it did.
func (c *Controller) reconcileNewReplicaSet(ctx context.Context, d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) (bool, error) {
	switch {
	case replicas(newRS) == desired(d):
		return false, nil
	case replicas(newRS) > desired(d):
		scaled, _, err := c.scaleReplicaSet(ctx, newRS, desired(d), d, false)
		return scaled, err
	}
	size, err := newRSNewReplicas(d, allRSs, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := c.scaleReplicaSet(ctx, newRS, size, d, false)
	return scaled, err
}

// reconcileOldReplicaSets shrinks the active old ReplicaSets as far as
// maxUnavailable allows, unavailable replicas first, and reports whether
// it did. As upstream, a failed write is not an error here: the next sync
// (the write failed because something changed) tries again.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, s *syncState, allRSs, oldRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) (bool, error) {
	logger := klog.FromContext(ctx)
	d := s.d
	if specReplicas(oldRSs) == 0 {
		return false, nil
	}
	logger.V(4).Info("New replica set", "replicaSet", klog.KObj(newRS), "availableReplicas", newRS.Status.AvailableReplicas)
	maxDown := maxScaleDown(d, allRSs, newRS)
	if maxDown <= 0 {
		return false, nil
	}
	// Unhealthy old replicas go first: removing them costs no availability.
	oldRSs, cleaned, err := c.cleanupUnhealthyReplicas(ctx, d, oldRSs, maxDown)
	if err != nil {
		logger.V(2).Info("Failed to clean up unhealthy replicas of old replica sets", "deployment", klog.KObj(d), "err", err)
		return false, nil
	}
	logger.V(4).Info("Cleaned up unhealthy replicas from old RSes", "count", cleaned)

	allRSs = append(slices.Clip(oldRSs), newRS)
	scaled, err := c.scaleDownOldReplicaSets(ctx, d, allRSs, oldRSs)
	if err != nil {
		logger.V(2).Info("Failed to scale down old replica sets", "deployment", klog.KObj(d), "err", err)
		return false, nil
	}
	logger.V(4).Info("Scaled down old RSes", "deployment", klog.KObj(d), "count", scaled)
	return cleaned+scaled > 0, nil
}

// maxScaleDown is how many old replicas may go now: all replicas, minus
// the minimum that must stay available, minus the new ReplicaSet's
// replicas that are not available yet (they cannot count towards it).
//
// With 10 replicas, maxUnavailable 2 and maxSurge 3: a rollout starts at
// 10 old + 3 new = 13; minAvailable is 8; with no new one available yet,
// 13 - 8 - 3 = 2 old ones may go. Old replicas that are unavailable are
// removed first, so that an unhealthy old ReplicaSet does not block the
// rollout.
func maxScaleDown(d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) int32 {
	minAvailable := desired(d) - maxUnavailable(d)
	newUnavailable := replicas(newRS) - newRS.Status.AvailableReplicas
	return specReplicas(allRSs) - minAvailable - newUnavailable
}

// cleanupUnhealthyReplicas removes up to maxCleanup unavailable replicas
// from the old ReplicaSets, oldest first. It returns oldRSs with the
// ReplicaSets as written and how many replicas went.
func (c *Controller) cleanupUnhealthyReplicas(ctx context.Context, d *apps.Deployment, oldRSs []*apps.ReplicaSet, maxCleanup int32) ([]*apps.ReplicaSet, int32, error) {
	logger := klog.FromContext(ctx)
	slices.SortFunc(oldRSs, byCreation)
	var total int32
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		if replicas(rs) == 0 {
			continue
		}
		logger.V(4).Info("Found available pods in old RS", "replicaSet", klog.KObj(rs), "availableReplicas", rs.Status.AvailableReplicas)
		if replicas(rs) == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxCleanup-total, replicas(rs)-rs.Status.AvailableReplicas)
		size := replicas(rs) - n
		if size > replicas(rs) {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, replicas(rs), size)
		}
		_, updated, err := c.scaleReplicaSet(ctx, rs, size, d, false)
		if err != nil {
			return nil, total, err
		}
		total += n
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownBudget is how many available replicas d may lose now: those
// above the minimum that must stay available.
func scaleDownBudget(d *apps.Deployment, allRSs []*apps.ReplicaSet) int32 {
	return availableReplicas(allRSs) - (desired(d) - maxUnavailable(d))
}

// scaleDownOldReplicaSets removes old replicas, oldest ReplicaSet first,
// as long as more than the minimum stay available. It returns how many.
func (c *Controller) scaleDownOldReplicaSets(ctx context.Context, d *apps.Deployment, allRSs, oldRSs []*apps.ReplicaSet) (int32, error) {
	logger := klog.FromContext(ctx)
	budget := scaleDownBudget(d, allRSs)
	if budget <= 0 {
		return 0, nil
	}
	logger.V(4).Info("Found available pods in deployment, scaling down old RSes", "deployment", klog.KObj(d), "availableReplicas", availableReplicas(allRSs))
	slices.SortFunc(oldRSs, byCreation)
	var total int32
	for _, rs := range oldRSs {
		if total >= budget {
			break
		}
		if replicas(rs) == 0 {
			continue
		}
		n := min(replicas(rs), budget-total)
		size := replicas(rs) - n
		if size > replicas(rs) {
			return 0, fmt.Errorf("when scaling down old RS, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, replicas(rs), size)
		}
		if _, _, err := c.scaleReplicaSet(ctx, rs, size, d, false); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
