package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// syncState is one sync of one Deployment.
type syncState struct {
	// d is the working copy the sync changes; stored is the Deployment as
	// the API server has it (the cache's, or the answer to the sync's last
	// write). stored is never modified.
	d, stored *apps.Deployment
	// rsList are the ReplicaSets the Deployment owns (after claiming).
	rsList []*apps.ReplicaSet
	// cacheBehind is set when the cached Deployment was older than the
	// controller's own last write, which stored then is. Upstream, which
	// always starts from the cache, writes status with a stale
	// resourceVersion in that case: the write right after creating a new
	// ReplicaSet fails with a conflict, and the NewReplicaSetCreated
	// condition it carried is never recorded (the retry finds the
	// ReplicaSet existing). Without the conflict, kcm must leave the
	// condition out itself to end in the same state.
	cacheBehind bool

	// Set by replicaSets on first use: the new ReplicaSet (nil until
	// created) and the others, oldest first.
	resolved bool
	newRS    *apps.ReplicaSet
	oldRSs   []*apps.ReplicaSet
}

// sync reconciles the Deployment with key, then writes its status if the
// sync changed it - also after an error, since what was decided before the
// error (a collision count, a failure condition) must be kept.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	start := time.Now()
	logger.V(4).Info("Started syncing deployment", "deployment", klog.KRef(namespace, name), "startTime", start)
	defer func() {
		logger.V(4).Info("Finished syncing deployment", "deployment", klog.KRef(namespace, name), "duration", time.Since(start))
	}()

	cached, err := c.dLister.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.Newest(key, nil)
		c.statusSpacer.Forget(key)
		logger.V(2).Info("Deployment has been deleted", "deployment", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return err
	}
	stored := c.written.Newest(key, cached)
	s := &syncState{d: stored.DeepCopy(), stored: stored, cacheBehind: stored != cached}
	err = c.syncDeployment(ctx, s)
	if perr := c.persist(ctx, s); err == nil {
		err = perr
	}
	if s.stored != stored {
		c.written.Record(key, s.stored)
	}
	if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
		// Every further write would fail the same way.
		return controller.Permanent(err)
	}
	return err
}

func (c *Controller) syncDeployment(ctx context.Context, s *syncState) error {
	d := s.d
	if reflect.DeepEqual(d.Spec.Selector, &metav1.LabelSelector{}) {
		c.recorder.Eventf(d, v1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		d.Status.ObservedGeneration = max(d.Status.ObservedGeneration, d.Generation)
		return nil
	}
	rsList, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	s.rsList = rsList

	if d.DeletionTimestamp != nil {
		return c.syncStatusOnly(ctx, s)
	}
	// Before anything else, so that a resumed Deployment does not count
	// the time it was paused against its progress deadline.
	c.checkPausedConditions(d)
	if d.Spec.Paused {
		return c.syncScale(ctx, s)
	}
	// A rollback must not race with a rollout: nothing else happens until
	// it is done and its annotation removed.
	if rollbackTo(d) != nil {
		return c.rollback(ctx, s)
	}
	scaling, err := c.isScalingEvent(ctx, s)
	if err != nil {
		return err
	}
	if scaling {
		return c.syncScale(ctx, s)
	}
	switch d.Spec.Strategy.Type {
	case apps.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, s)
	case apps.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, s)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// claimReplicaSets returns the ReplicaSets d owns, adopting matching
// orphans and releasing its own that no longer match.
func (c *Controller) claimReplicaSets(ctx context.Context, d *apps.Deployment) ([]*apps.ReplicaSet, error) {
	candidates, err := c.claimCandidates(d)
	if err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %v", d.Namespace, d.Name, err)
	}
	// Adopt only after an uncached read confirmed d is not being deleted.
	canAdopt := controllerref.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if fresh.UID != d.UID {
			return nil, fmt.Errorf("original Deployment %v/%v is gone: got uid %v, wanted %v", d.Namespace, d.Name, fresh.UID, d.UID)
		}
		return fresh, nil
	})
	m := controllerref.NewReplicaSetManager(controllerref.ReplicaSetPatcher(c.client), d, controllerKind, selector, canAdopt)
	return m.Claim(ctx, candidates)
}

// claimCandidates returns the ReplicaSets of d's namespace that claiming
// may keep, release or adopt: d's own and the orphans. Those of other
// controllers it would ignore anyway.
func (c *Controller) claimCandidates(d *apps.Deployment) ([]*apps.ReplicaSet, error) {
	owned, err := controllerref.ByControllerUID[*apps.ReplicaSet](c.rsIndexer, d.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := c.rsIndexer.ByIndex(orphanIndex, d.Namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*apps.ReplicaSet, 0, len(owned)+len(orphans))
	for _, rs := range owned {
		if rs.Namespace == d.Namespace {
			out = append(out, rs)
		}
	}
	for _, obj := range orphans {
		if rs, ok := obj.(*apps.ReplicaSet); ok {
			out = append(out, rs)
		}
	}
	return out, nil
}

// syncStatusOnly reports status without changing any ReplicaSet (a
// Deployment being deleted).
func (c *Controller) syncStatusOnly(ctx context.Context, s *syncState) error {
	newRS, oldRSs, err := c.replicaSets(ctx, s, false)
	if err != nil {
		return err
	}
	c.setStatus(s.d, append(oldRSs, newRS), newRS)
	return nil
}

// syncScale handles a paused Deployment or a change of spec.replicas:
// it scales the ReplicaSets proportionally, without rolling out.
func (c *Controller) syncScale(ctx context.Context, s *syncState) error {
	d := s.d
	newRS, oldRSs, err := c.replicaSets(ctx, s, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused && rollbackTo(d) == nil {
		if err := c.cleanupOldReplicaSets(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	c.setStatus(d, append(oldRSs, newRS), newRS)
	return nil
}

// setStatus recalculates d's status from its ReplicaSets.
func (c *Controller) setStatus(d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) {
	d.Status = calculateStatus(d, allRSs, newRS, c.terminatingReplicas, c.clock.Now())
}

// checkPausedConditions marks pausing and resuming in the Progressing
// condition (status Unknown), so that the time spent paused does not count
// against the progress deadline. A timed-out rollout keeps its condition.
func (c *Controller) checkPausedConditions(d *apps.Deployment) {
	if !hasProgressDeadline(d) {
		return
	}
	cond := getCondition(d.Status, apps.DeploymentProgressing)
	if cond != nil && cond.Reason == ReasonProgressDeadlineExceeded {
		return
	}
	pausedCond := cond != nil && cond.Reason == ReasonDeploymentPaused
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, newCondition(apps.DeploymentProgressing, v1.ConditionUnknown, ReasonDeploymentPaused, "Deployment is paused", c.clock.Now()))
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, newCondition(apps.DeploymentProgressing, v1.ConditionUnknown, ReasonDeploymentResumed, "Deployment is resumed", c.clock.Now()))
	}
}

// isScalingEvent reports whether spec.replicas changed since the active
// ReplicaSets were last sized (their desired-replicas annotation).
func (c *Controller) isScalingEvent(ctx context.Context, s *syncState) (bool, error) {
	newRS, oldRSs, err := c.replicaSets(ctx, s, false)
	if err != nil {
		return false, err
	}
	logger := klog.FromContext(ctx)
	for _, rs := range filterActive(append(oldRSs, newRS)) {
		if want, ok := nonNegativeAnnotation(logger, rs, DesiredReplicasAnnotation); ok && want != desired(s.d) {
			return true, nil
		}
	}
	return false, nil
}

// podsByReplicaSet returns the cached pods of each ReplicaSet, by its UID.
func (c *Controller) podsByReplicaSet(rsList []*apps.ReplicaSet) (map[types.UID][]*v1.Pod, error) {
	out := make(map[types.UID][]*v1.Pod, len(rsList))
	for _, rs := range rsList {
		pods, err := controllerref.PodsByOwner(c.podIndexer, rs, "ReplicaSet", false)
		if err != nil {
			return nil, err
		}
		out[rs.UID] = pods
	}
	return out, nil
}
