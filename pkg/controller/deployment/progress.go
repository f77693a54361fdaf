package deployment

import (
	"context"
	"fmt"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// syncRolloutStatus recalculates d's status during a rollout, including
// the Progressing condition: NewReplicaSetAvailable once complete,
// ReplicaSetUpdated (with a fresh lastUpdateTime) whenever the rollout
// moved, ProgressDeadlineExceeded once it has not moved for
// progressDeadlineSeconds. When nothing changed, it requeues d for the
// moment the deadline would pass, since no event will come then.
func (c *Controller) syncRolloutStatus(ctx context.Context, d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) error {
	now := c.clock.Now()
	newStatus := rolloutStatus(ctx, d, allRSs, newRS, c.terminatingReplicas, now)
	if statusUnchanged(d.Status, newStatus) {
		c.requeueStuckDeployment(ctx, d, newStatus, now)
		return nil
	}
	d.Status = newStatus
	return nil
}

// rolloutStatus is d's status with the Progressing and ReplicaFailure
// conditions brought up to date.
func rolloutStatus(ctx context.Context, d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet, withTerminating bool, now time.Time) apps.DeploymentStatus {
	status := calculateStatus(d, allRSs, newRS, withTerminating, now)
	if !hasProgressDeadline(d) {
		removeCondition(&status, apps.DeploymentProgressing)
	}
	// Once complete, a rollout stays complete until the template changes
	// (a new ReplicaSet) or replicas go missing.
	cur := getCondition(d.Status, apps.DeploymentProgressing)
	complete := status.Replicas == status.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewRSAvailable
	if hasProgressDeadline(d) && !complete {
		subject := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			subject = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case deploymentComplete(d, &status):
			setCondition(&status, newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewRSAvailable, subject+" has successfully progressed.", now))
		case deploymentProgressing(d, &status):
			// Progress moves lastUpdateTime; lastTransitionTime stays while
			// the condition stays True.
			cond := newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonReplicaSetUpdated, subject+" is progressing.", now)
			if cur != nil {
				if cur.Status == v1.ConditionTrue {
					cond.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&status, apps.DeploymentProgressing)
			}
			setCondition(&status, cond)
		case deploymentTimedOut(ctx, d, &status, now):
			setCondition(&status, newCondition(apps.DeploymentProgressing, v1.ConditionFalse, ReasonProgressDeadlineExceeded, subject+" has timed out progressing.", now))
		}
	}
	if failures := replicaFailures(allRSs, newRS); len(failures) > 0 {
		setCondition(&status, failures[0])
	} else {
		removeCondition(&status, apps.DeploymentReplicaFailure)
	}
	return status
}

// replicaFailures are the ReplicaFailure conditions of the new ReplicaSet
// or, if it has none, of all of them.
func replicaFailures(allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet) []apps.DeploymentCondition {
	collect := func(out []apps.DeploymentCondition, rs *apps.ReplicaSet) []apps.DeploymentCondition {
		if rs == nil {
			return out
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == apps.ReplicaSetReplicaFailure {
				out = append(out, fromReplicaSetCondition(c))
			}
		}
		return out
	}
	if out := collect(nil, newRS); len(out) > 0 {
		return out
	}
	var out []apps.DeploymentCondition
	for _, rs := range allRSs {
		out = collect(out, rs)
	}
	return out
}

// deploymentComplete reports whether all of spec.replicas run the new
// template, available, with nothing else left, as of the current spec.
func deploymentComplete(d *apps.Deployment, status *apps.DeploymentStatus) bool {
	return status.UpdatedReplicas == desired(d) &&
		status.Replicas == desired(d) &&
		status.AvailableReplicas == desired(d) &&
		status.ObservedGeneration >= d.Generation
}

// deploymentProgressing reports whether status moved the rollout on from
// d's current status: more updated, ready or available replicas, or fewer
// old ones.
func deploymentProgressing(d *apps.Deployment, status *apps.DeploymentStatus) bool {
	old := d.Status
	return status.UpdatedReplicas > old.UpdatedReplicas ||
		status.Replicas-status.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		status.ReadyReplicas > old.ReadyReplicas ||
		status.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut reports whether the rollout has not progressed for
// progressDeadlineSeconds since the Progressing condition was last
// updated. A complete rollout never times out; a timed-out one stays so.
func deploymentTimedOut(ctx context.Context, d *apps.Deployment, status *apps.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	cond := getCondition(*status, apps.DeploymentProgressing)
	if cond == nil {
		return false
	}
	switch cond.Reason {
	case ReasonNewRSAvailable:
		return false
	case ReasonProgressDeadlineExceeded:
		return true
	}
	from := cond.LastUpdateTime
	timedOut := from.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
	klog.FromContext(ctx).V(4).Info("Deployment timed out from last progress check", "deployment", klog.KObj(d), "timeout", timedOut, "from", from, "now", now)
	return timedOut
}

// stuckRequeueDelay is when to check a rollout that made no progress
// again: a second after its deadline passes. ok is false when there is no
// deadline to watch (none set, complete, or timed out already).
func stuckRequeueDelay(d *apps.Deployment, status apps.DeploymentStatus, now time.Time) (time.Duration, bool) {
	cur := getCondition(d.Status, apps.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil {
		return 0, false
	}
	if deploymentComplete(d, &status) || cur.Reason == ReasonProgressDeadlineExceeded {
		return 0, false
	}
	return cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now), true
}

// requeueStuckDeployment requeues d for its progress deadline: with
// backoff when it is (nearly) due, otherwise a second after it.
func (c *Controller) requeueStuckDeployment(ctx context.Context, d *apps.Deployment, status apps.DeploymentStatus, now time.Time) {
	after, ok := stuckRequeueDelay(d, status, now)
	if !ok {
		return
	}
	logger := klog.FromContext(ctx)
	if after < time.Second {
		logger.V(4).Info("Queueing up deployment for a progress check now", "deployment", klog.KObj(d))
		c.queue.AddRateLimited(deploymentKey(d))
		return
	}
	logger.V(4).Info("Queueing up deployment for a progress check", "deployment", klog.KObj(d), "queueAfter", int(after.Seconds()))
	c.queue.AddAfter(deploymentKey(d), after+time.Second)
}
