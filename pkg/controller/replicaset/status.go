package replicaset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// afterDeleting returns the active and terminating pods once the pods
// manageReplicas deleted are gone from the first and, where the API
// server keeps them while they terminate, added to the second.
//
// Upstream computes the status from the pods as they were before; the
// informer then reports the deletions, often one by one, and each report
// brings another status write. Counting them at once writes the status
// the cache will show, one write per scale-down instead of several, and an
// owning Deployment never reads the availability of pods already deleted.
// Created pods are not counted ahead: that would only show a Deployment
// one more state (replicas up, none ready yet) to write.
func (c *Controller) afterDeleting(activePods, terminatingPods, deleted []*v1.Pod) (active, terminating []*v1.Pod) {
	if len(deleted) == 0 {
		return activePods, terminatingPods
	}
	gone := make(map[*v1.Pod]bool, len(deleted))
	for _, p := range deleted {
		gone[p] = true
		if c.terminatingReplicas && lingers(p) {
			terminatingPods = append(terminatingPods, p)
		}
	}
	return filterPods(activePods, func(p *v1.Pod) bool { return !gone[p] }), terminatingPods
}

// lingers reports whether the API server, asked to delete the active pod p
// with default options, keeps it terminating rather than removing it at
// once: it has finalizers, or it is scheduled and has a grace period (the
// pod strategy's rule for graceful deletion).
func lingers(p *v1.Pod) bool {
	if len(p.Finalizers) > 0 {
		return true
	}
	grace := p.Spec.TerminationGracePeriodSeconds
	return p.Spec.NodeName != "" && grace != nil && *grace > 0
}

// calculateStatus returns rs's status for its claimed active and
// terminating pods at now, and the outcome of manageReplicas: a failure
// sets the ReplicaFailure condition (if not set yet), success removes it.
// ObservedGeneration is left as it was.
func (c *Controller) calculateStatus(rs *apps.ReplicaSet, activePods, terminatingPods []*v1.Pod, manageErr error, now time.Time) apps.ReplicaSetStatus {
	status := rs.Status // Conditions is replaced, never modified in place
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fullyLabeled, ready, available int32
	for _, p := range activePods {
		// Selected pods may lack some template labels.
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if podranking.IsReady(p) {
			ready++
			if podranking.IsAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	status.Replicas = int32(len(activePods))
	status.FullyLabeledReplicas = fullyLabeled
	status.ReadyReplicas = ready
	status.AvailableReplicas = available
	status.TerminatingReplicas = nil
	if c.terminatingReplicas {
		status.TerminatingReplicas = ptr.To(int32(len(terminatingPods)))
	}

	hasFailure := getCondition(rs.Status, apps.ReplicaSetReplicaFailure) != nil
	switch {
	case manageErr != nil && !hasFailure:
		var reason string
		// activePods is counted after the deletions: a failed one
		// leaves too many, a failed creation too few.
		switch diff := len(activePods) - int(desiredReplicas(rs)); {
		case diff < 0:
			reason = podcontrol.FailedCreateReason
		case diff > 0:
			reason = podcontrol.FailedDeleteReason
		}
		setCondition(&status, apps.ReplicaSetCondition{
			Type:               apps.ReplicaSetReplicaFailure,
			Status:             v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now),
			Reason:             reason,
			Message:            manageErr.Error(),
		})
	case manageErr == nil && hasFailure:
		status.Conditions = withoutCondition(status.Conditions, apps.ReplicaSetReplicaFailure)
	}
	return status
}

// statusUpToDate reports whether writing status would change nothing.
func statusUpToDate(rs *apps.ReplicaSet, status apps.ReplicaSetStatus) bool {
	cur := rs.Status
	// An unreported terminatingReplicas is written even where it counts
	// as none.
	return sameCounters(cur, status) &&
		ptr.Equal(cur.TerminatingReplicas, status.TerminatingReplicas) &&
		rs.Generation == cur.ObservedGeneration &&
		reflect.DeepEqual(cur.Conditions, status.Conditions)
}

// progressOnly reports whether status differs from rs's current one only
// by counters that did not fall: no condition or observedGeneration
// change, no fewer ready, available or fully labeled replicas. Those are
// the changes a Spacer may hold back. A fall must be written at once: an
// owning Deployment's Available condition turns False on it, and skipping
// the dip would change the Deployment's conditions, not just delay them.
func progressOnly(rs *apps.ReplicaSet, status apps.ReplicaSetStatus) bool {
	cur := rs.Status
	return countersOnly(rs, status) &&
		status.ReadyReplicas >= cur.ReadyReplicas &&
		status.AvailableReplicas >= cur.AvailableReplicas &&
		status.FullyLabeledReplicas >= cur.FullyLabeledReplicas
}

// settled reports whether status shows rs at its goal: every desired
// replica present, fully labeled, ready and available, and none
// terminating.
func settled(rs *apps.ReplicaSet, status apps.ReplicaSetStatus) bool {
	want := desiredReplicas(rs)
	return status.Replicas == want && status.FullyLabeledReplicas == want &&
		status.ReadyReplicas == want && status.AvailableReplicas == want &&
		ptr.Deref(status.TerminatingReplicas, 0) == 0
}

// waitsForPods reports whether a status change may wait until the cache
// has seen the pods this controller created or deleted. needsManage is
// whether the expectations were met when the sync began (so that it could
// create or delete pods), created how many pods it created.
//
//   - Pods from an earlier sync are unobserved and only counters changed:
//     the cache's counts would be a step back from the status written then
//     (deletions are counted ahead, afterDeleting) or a partial step
//     (creations).
//   - Creations from an earlier sync are unobserved: the counts are
//     partial, and a new observedGeneration (a scale while they are on
//     their way) can wait for them.
//   - The sync created pods and no counter moved: the status would show
//     only the new observedGeneration (a new ReplicaSet's first status, a
//     scale-up) beside counts that the creations change a moment later.
//     Each creation observed enqueues the owner again, even one observed
//     before this sync ends, and the sync after the last writes both.
//     Upstream writes each. A sync that creates pods after earlier ones
//     were observed writes, as upstream does, so that a large ReplicaSet
//     shows each batch.
//
// A changed condition (a failed creation or deletion) is written at once,
// and expectations that expire end the wait.
func (c *Controller) waitsForPods(key string, rs *apps.ReplicaSet, status apps.ReplicaSetStatus, needsManage bool, created int) bool {
	switch {
	case !reflect.DeepEqual(rs.Status.Conditions, status.Conditions):
		return false
	case !needsManage:
		return countersOnly(rs, status) || c.expectations.PendingCreations(key)
	default:
		return created > 0 && sameCounters(rs.Status, status)
	}
}

// sameCounters reports whether a and b count the same replicas; an
// unreported terminatingReplicas counts as none.
func sameCounters(a, b apps.ReplicaSetStatus) bool {
	return a.Replicas == b.Replicas && a.FullyLabeledReplicas == b.FullyLabeledReplicas &&
		a.ReadyReplicas == b.ReadyReplicas && a.AvailableReplicas == b.AvailableReplicas &&
		ptr.Deref(a.TerminatingReplicas, 0) == ptr.Deref(b.TerminatingReplicas, 0)
}

// countersOnly reports whether status differs from rs's current one at
// most in its replica counters.
func countersOnly(rs *apps.ReplicaSet, status apps.ReplicaSetStatus) bool {
	return rs.Status.ObservedGeneration == rs.Generation &&
		reflect.DeepEqual(rs.Status.Conditions, status.Conditions)
}

// updateStatus writes status, with observedGeneration set to rs's
// generation, unless nothing would change. A failed write is retried once
// on a freshly read object.
func (c *Controller) updateStatus(ctx context.Context, rs *apps.ReplicaSet, status apps.ReplicaSetStatus) (*apps.ReplicaSet, error) {
	if statusUpToDate(rs, status) {
		return rs, nil
	}
	// The generation acted on, even if a retry reads a newer object.
	status.ObservedGeneration = rs.Generation
	logger := klog.FromContext(ctx)
	cur := rs
	for attempt := 0; ; attempt++ {
		logger.V(4).Info(fmt.Sprintf("Updating status for %v: %s/%s, ", c.kind.Kind, cur.Namespace, cur.Name) +
			fmt.Sprintf("replicas %d->%d (need %d), ", cur.Status.Replicas, status.Replicas, desiredReplicas(cur)) +
			fmt.Sprintf("fullyLabeledReplicas %d->%d, ", cur.Status.FullyLabeledReplicas, status.FullyLabeledReplicas) +
			fmt.Sprintf("readyReplicas %d->%d, ", cur.Status.ReadyReplicas, status.ReadyReplicas) +
			fmt.Sprintf("availableReplicas %d->%d, ", cur.Status.AvailableReplicas, status.AvailableReplicas) +
			fmt.Sprintf("terminatingReplicas %s->%s, ", int32String(cur.Status.TerminatingReplicas), int32String(status.TerminatingReplicas)) +
			fmt.Sprintf("sequence No: %v->%v", cur.Status.ObservedGeneration, status.ObservedGeneration))
		// A shallow copy is enough: only Status is replaced, nothing
		// reachable from the cached object is modified.
		next := *cur
		next.Status = status
		updated, err := c.owners.UpdateStatus(ctx, &next)
		if err == nil {
			return updated, nil
		}
		if attempt >= statusUpdateRetries {
			return nil, err
		}
		if cur, err = c.owners.GetFresh(ctx, rs.Namespace, rs.Name); err != nil {
			// The update error is less interesting than not knowing the object.
			return nil, err
		}
	}
}

func int32String(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func getCondition(status apps.ReplicaSetStatus, t apps.ReplicaSetConditionType) *apps.ReplicaSetCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// setCondition puts cond in status, unless a condition of its type with
// the same status and reason is there already.
func setCondition(status *apps.ReplicaSetStatus, cond apps.ReplicaSetCondition) {
	if cur := getCondition(*status, cond.Type); cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason {
		return
	}
	status.Conditions = append(withoutCondition(status.Conditions, cond.Type), cond)
}

// withoutCondition returns a new slice without conditions of type t.
func withoutCondition(conds []apps.ReplicaSetCondition, t apps.ReplicaSetConditionType) []apps.ReplicaSetCondition {
	var out []apps.ReplicaSetCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}
