package deployment

import (
	"context"
	"slices"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutRecreate scales every old ReplicaSet to zero, waits until none of
// their pods runs any more, and only then creates (or scales up) the new
// ReplicaSet to spec.replicas.
func (c *Controller) rolloutRecreate(ctx context.Context, s *syncState) error {
	d := s.d
	// Every pod of the Deployment, by ReplicaSet, to tell whether old ones
	// still run.
	podMap, err := c.podsByReplicaSet(s.rsList)
	if err != nil {
		return err
	}
	newRS, oldRSs, err := c.replicaSets(ctx, s, false)
	if err != nil {
		return err
	}
	allRSs := append(slices.Clip(oldRSs), newRS)

	scaledDown, err := c.scaleDownOldForRecreate(ctx, d, filterActive(oldRSs))
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, d, allRSs, newRS)
	}
	if oldPodsRunning(newRS, oldRSs, podMap) {
		return c.syncRolloutStatus(ctx, d, allRSs, newRS)
	}
	if newRS == nil {
		if newRS, oldRSs, err = c.replicaSets(ctx, s, true); err != nil {
			return err
		}
		allRSs = append(slices.Clip(oldRSs), newRS)
	}
	if _, _, err := c.scaleReplicaSet(ctx, newRS, desired(d), d, false); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupOldReplicaSets(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, allRSs, newRS)
}

// scaleDownOldForRecreate scales the active old ReplicaSets to zero and
// reports whether it resized any.
func (c *Controller) scaleDownOldForRecreate(ctx context.Context, d *apps.Deployment, oldRSs []*apps.ReplicaSet) (bool, error) {
	scaled := false
	for _, rs := range oldRSs {
		if replicas(rs) == 0 {
			continue
		}
		ok, _, err := c.scaleReplicaSet(ctx, rs, 0, d, false)
		if err != nil {
			return false, err
		}
		scaled = scaled || ok
	}
	return scaled, nil
}

// oldPodsRunning reports whether the old ReplicaSets still report pods, or
// any pod not of the new ReplicaSet has not terminated (Succeeded or
// Failed) yet. A pod in phase Unknown may still run: it counts.
func oldPodsRunning(newRS *apps.ReplicaSet, oldRSs []*apps.ReplicaSet, podMap map[types.UID][]*v1.Pod) bool {
	if statusReplicas(oldRSs) > 0 {
		return true
	}
	for uid, pods := range podMap {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, pod := range pods {
			if pod.Status.Phase != v1.PodFailed && pod.Status.Phase != v1.PodSucceeded {
				return true
			}
		}
	}
	return false
}
