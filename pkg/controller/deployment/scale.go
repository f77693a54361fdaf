package deployment

import (
	"context"
	"slices"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/integer"
)

// scale resizes the ReplicaSets after spec.replicas changed (or while
// paused) without moving replicas between templates: a single active (or
// latest) ReplicaSet takes spec.replicas; with a saturated new ReplicaSet
// the old ones go to zero; otherwise, for a rolling update, every active
// ReplicaSet grows or shrinks in proportion to its size, so that a rollout
// in progress keeps its ratio of new to old.
func (c *Controller) scale(ctx context.Context, d *apps.Deployment, newRS *apps.ReplicaSet, oldRSs []*apps.ReplicaSet) error {
	if rs := activeOrLatest(newRS, oldRSs); rs != nil {
		if replicas(rs) == desired(d) {
			return nil
		}
		_, _, err := c.scaleReplicaSet(ctx, rs, desired(d), d, false)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := c.scaleReplicaSet(ctx, old, 0, d, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	active := filterActive(append(slices.Clip(oldRSs), newRS))
	sizes := proportionalSizes(klog.FromContext(ctx), d, active)
	for i, rs := range active {
		// Forced: the replicas annotations are brought up to date even
		// where the size stays.
		if _, _, err := c.scaleReplicaSet(ctx, rs, sizes[i], d, true); err != nil {
			return err
		}
	}
	return nil
}

// proportionalSizes sorts active (the active ReplicaSets) into the order
// to resize them in and returns their new sizes, which together make
// spec.replicas plus maxSurge (zero for zero replicas). Each gets a share
// in proportion to its size relative to the size the Deployment had when
// it was last sized (max-replicas annotation); rounding leftovers go to the
// first, the largest. Growing, larger and then newer ReplicaSets come
// first; shrinking, larger and then older ones.
func proportionalSizes(logger klog.Logger, d *apps.Deployment, active []*apps.ReplicaSet) []int32 {
	allowed := int32(0)
	if desired(d) > 0 {
		allowed = desired(d) + maxSurge(d)
	}
	toAdd := allowed - specReplicas(active)
	switch {
	case toAdd > 0:
		slices.SortFunc(active, bySizeNewer)
	case toAdd < 0:
		slices.SortFunc(active, bySizeOlder)
	}
	sizes := make([]int32, len(active))
	added := int32(0)
	for i, rs := range active {
		sizes[i] = replicas(rs)
		if toAdd != 0 {
			p := proportion(logger, rs, d, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	if toAdd != 0 && len(active) > 0 {
		sizes[0] = max(sizes[0]+toAdd-added, 0)
	}
	return sizes
}

// proportion is how many of toAdd replicas (negative: to remove) rs
// should take, given that added were handed out already.
func proportion(logger klog.Logger, rs *apps.ReplicaSet, d *apps.Deployment, toAdd, added int32) int32 {
	if rs == nil || replicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := fraction(logger, rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		// Never more than what is left to hand out.
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// fraction is rs's share of the change: its size scaled by the ratio of
// the Deployment's new maximum size to the one it was sized for, minus
// its size. Scaling to zero takes everything.
func fraction(logger klog.Logger, rs *apps.ReplicaSet, d *apps.Deployment) int32 {
	if desired(d) == 0 {
		return -replicas(rs)
	}
	newMax := desired(d) + maxSurge(d)
	oldMax, ok := nonNegativeAnnotation(logger, rs, MaxReplicasAnnotation)
	if !ok || oldMax == 0 {
		// Not sized by a Deployment yet (e.g. adopted): use the
		// Deployment's current size.
		oldMax = d.Status.Replicas
		if oldMax == 0 {
			return 0
		}
	}
	// int32 product, as upstream computes it.
	scaled := float64(replicas(rs)*newMax) / float64(oldMax)
	return integer.RoundToInt32(scaled) - replicas(rs)
}

// scaleReplicaSet sets rs to newScale replicas and its replicas
// annotations to the Deployment's current ones, and records a
// ScalingReplicaSet Event when the size changed. Unless forced, it does
// nothing when the size is right already. It returns whether rs was
// resized and rs as written.
func (c *Controller) scaleReplicaSet(ctx context.Context, rs *apps.ReplicaSet, newScale int32, d *apps.Deployment, force bool) (bool, *apps.ReplicaSet, error) {
	oldScale := replicas(rs)
	if !force && oldScale == newScale {
		return false, rs, nil
	}
	sizeChanged := oldScale != newScale
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, desired(d), maxReplicas(d)) {
		return false, rs, nil
	}
	cp := rs.DeepCopy()
	cp.Spec.Replicas = &newScale
	setReplicasAnnotations(cp, desired(d), maxReplicas(d))
	updated, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return false, nil, err
	}
	if !sizeChanged {
		return false, updated, nil
	}
	direction := "down"
	if oldScale < newScale {
		direction = "up"
	}
	c.recorder.Eventf(d, v1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", direction, updated.Name, oldScale, newScale)
	return true, updated, nil
}
