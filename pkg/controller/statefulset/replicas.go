package statefulset

import (
	"context"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// Each step below handles one pod and reports whether, in OrderedReady
// mode, the sync must stop there (Parallel mode ignores it).

// processReplica makes replica i exist, healthy and consistent: a pod in a
// terminal phase is deleted (its successor comes next sync), a missing
// one created, a pending one given its missing claims. In OrderedReady
// mode it stops at a pod it just created, or one that is terminating, not
// Running and Ready, or not yet available. Finally the pod's identity,
// storage and claims' owner references are repaired.
func (c *Controller) processReplica(ctx context.Context, r *rollout, i int) (bool, error) {
	logger := klog.FromContext(ctx)
	set, pod := r.set, r.replicas[i]
	// Failed and Succeeded pods alike: the exit code of a pod evicted or
	// stopped by a node restart decides its phase, not why it stopped.
	if isTerminal(pod) {
		if pod.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		stale, err := c.claimIsStale(set, pod)
		if err != nil || stale {
			return true, err
		}
		if err := c.createPod(ctx, set, pod); err != nil {
			return true, err
		}
		if r.monotonic {
			return true, nil
		}
	}
	if isPending(pod) {
		logger.V(4).Info("StatefulSet is triggering PVC creation for pending Pod", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
		if err := c.createMissingClaims(ctx, set, pod); err != nil {
			return true, err
		}
	}
	if r.monotonic {
		switch {
		case isTerminating(pod):
			logger.V(4).Info("StatefulSet is waiting for Pod to Terminate", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		case !isRunningAndReady(pod):
			logger.V(4).Info("StatefulSet is waiting for Pod to be Running and Ready", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		case !isAvailable(pod, set.Spec.MinReadySeconds, r.now):
			logger.V(4).Info("StatefulSet is waiting for Pod to be Available", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
	}
	// An error here is expected while the pod is not fully updated: it
	// counts as matching.
	retentionOK, err := c.claimsMatchRetention(ctx, r.updateSet, pod)
	if err != nil {
		retentionOK = true
	}
	if identityMatches(set, pod) && storageMatches(set, pod) && retentionOK {
		return false, nil
	}
	if err := c.updatePod(ctx, r.updateSet, pod.DeepCopy()); err != nil {
		return true, err
	}
	return false, nil
}

// fixCondemnedClaims gives a condemned pod's claims the owner references
// the retention policy wants for a scaled-down pod, before it goes.
func (c *Controller) fixCondemnedClaims(ctx context.Context, r *rollout, i int) (bool, error) {
	pod := r.condemned[i]
	match, err := c.claimsMatchRetention(ctx, r.updateSet, pod)
	if err != nil {
		return true, err
	}
	if !match {
		if err := c.updateClaimsForRetention(ctx, r.updateSet, pod); err != nil {
			return true, err
		}
	}
	return false, nil
}

// processCondemned deletes condemned pod i. In OrderedReady mode it waits
// for a terminating pod to go, and for an unhealthy one unless it is the
// first unavailable pod; it deletes at most one pod per sync.
func (c *Controller) processCondemned(ctx context.Context, r *rollout, i int) (bool, error) {
	logger := klog.FromContext(ctx)
	set, pod := r.set, r.condemned[i]
	if isTerminating(pod) {
		if r.monotonic {
			logger.V(4).Info("StatefulSet is waiting for Pod to Terminate prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
		return false, nil
	}
	if r.monotonic && pod != r.firstUnavailable {
		if !isRunningAndReady(pod) {
			logger.V(4).Info("StatefulSet is waiting for Pod to be Running and Ready prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(r.firstUnavailable))
			return true, nil
		}
		if !isAvailable(pod, set.Spec.MinReadySeconds, r.now) {
			logger.V(4).Info("StatefulSet is waiting for Pod to be Available prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(r.firstUnavailable))
			return true, nil
		}
	}
	logger.V(2).Info("Pod of StatefulSet is terminating for scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
	return true, c.deletePod(ctx, set, pod)
}

// recreateDeleteAndWait is the first half of the Recreate strategy: every
// created pod not at the update revision is deleted, in parallel, and
// nothing is created until all are gone. It reports whether they are.
func (c *Controller) recreateDeleteAndWait(ctx context.Context, r *rollout) (bool, error) {
	logger := klog.FromContext(ctx)
	all := slices.Concat(r.replicas, r.condemned)
	var inProgress atomic.Bool
	_, err := runForAll(all, func(i int) (bool, error) {
		pod := all[i]
		if pod == nil || !isCreated(pod) || podRevision(pod) == r.update.Name {
			return false, nil
		}
		inProgress.Store(true)
		if isTerminating(pod) {
			return false, nil
		}
		logger.V(4).Info("Recreate: deleting old revision pod", "statefulSet", klog.KObj(r.set), "pod", klog.KObj(pod))
		if err := c.deletePod(ctx, r.set, pod); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return true, nil
	}, false)
	if err != nil {
		return false, err
	}
	if inProgress.Load() {
		setProgressingCondition(&r.status, v1.ConditionTrue, recreateInProgressReason, "Deleting old revision pods")
		return false, nil
	}
	return true, nil
}
