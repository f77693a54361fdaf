package statefulset

import (
	"context"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
)

// The RollingUpdate strategy replaces pods not at the update revision,
// highest ordinal first, down to the partition, once every replica exists
// (reconcile returns earlier otherwise). Deleted pods come back at the
// update revision in a later sync.

// partition is the lowest ordinal index a rolling update replaces.
func partition(set *apps.StatefulSet) int {
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return int(*ru.Partition)
	}
	return 0
}

// maxUnavailable resolves rollingUpdate.maxUnavailable (default 1, a
// percentage of replicas rounded down) to at least 1.
func maxUnavailable(set *apps.StatefulSet) (int, error) {
	ru := set.Spec.UpdateStrategy.RollingUpdate
	if ru == nil {
		return 1, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, intstr.FromInt32(1)), int(*set.Spec.Replicas), false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}

// rollOneAtATime is the rolling update without MaxUnavailableStatefulSet:
// the highest outdated pod is deleted, and the update waits for each
// replaced pod to be available before the next.
func (c *Controller) rollOneAtATime(ctx context.Context, r *rollout) (*apps.StatefulSetStatus, error) {
	logger := klog.FromContext(ctx)
	set := r.set
	for target := len(r.replicas) - 1; target >= partition(set); target-- {
		pod := r.replicas[target]
		if podRevision(pod) != r.update.Name && !isTerminating(pod) {
			logger.V(2).Info("Pod of StatefulSet is terminating for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			err := c.deletePod(ctx, set, pod)
			if err == nil {
				r.status.CurrentReplicas--
			}
			return &r.status, err
		}
		if isUnavailable(pod, set.Spec.MinReadySeconds, r.now) {
			logger.V(4).Info("StatefulSet is waiting for Pod to update", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return &r.status, nil
		}
	}
	return &r.status, nil
}

// rollWithBudget is the rolling update with MaxUnavailableStatefulSet:
// outdated pods are deleted, highest ordinal first, as long as fewer than
// maxUnavailable replicas are unavailable. In Parallel mode, outdated pods
// that are unavailable anyway go first and do not use up the budget.
func (c *Controller) rollWithBudget(ctx context.Context, r *rollout) (*apps.StatefulSetStatus, error) {
	logger := klog.FromContext(ctx)
	set := r.set
	budget, err := maxUnavailable(set)
	if err != nil {
		return &r.status, err
	}
	parallel := set.Spec.PodManagementPolicy == apps.ParallelPodManagement
	unavailable, unavailableOutdated := 0, 0
	for _, pod := range r.replicas {
		if isUnavailable(pod, set.Spec.MinReadySeconds, r.now) {
			unavailable++
			if parallel && podRevision(pod) != r.update.Name && !isTerminating(pod) {
				unavailableOutdated++
			}
		}
	}
	unavailableReplicas.WithLabelValues(set.Namespace, set.Name, string(set.Spec.PodManagementPolicy)).Set(float64(unavailable))
	if unavailable >= budget && unavailableOutdated == 0 {
		if unavailable > budget {
			logger.V(4).Info("StatefulSet found unavailablePods, more than the allowed maxUnavailable", "statefulSet", klog.KObj(set),
				"unavailablePods", unavailable, "unavailablePodsNeedingUpdate", unavailableOutdated, "maxUnavailable", budget)
		}
		return &r.status, nil
	}
	if parallel {
		return c.rollParallel(ctx, r, budget-unavailable)
	}
	deleted := 0
	for target := len(r.replicas) - 1; target >= partition(set) && deleted < budget-unavailable; target-- {
		pod := r.replicas[target]
		if podRevision(pod) != r.update.Name && !isTerminating(pod) {
			logger.V(2).Info("StatefulSet terminating Pod for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			if err := c.deletePod(ctx, set, pod); err != nil {
				return &r.status, err
			}
			deleted++
			r.status.CurrentReplicas--
		}
	}
	return &r.status, nil
}

// rollParallel deletes, down to the partition, first every outdated pod
// that is unavailable anyway, then outdated available ones while budget
// lasts: spending the budget on healthy pods first could leave the
// unavailable ones for last and disrupt far more than maxUnavailable.
func (c *Controller) rollParallel(ctx context.Context, r *rollout, budget int) (*apps.StatefulSetStatus, error) {
	logger := klog.FromContext(ctx)
	set := r.set
	minReady := set.Spec.MinReadySeconds
	for target := len(r.replicas) - 1; target >= partition(set); target-- {
		pod := r.replicas[target]
		if podRevision(pod) != r.update.Name && !isAvailable(pod, minReady, r.now) && !isTerminating(pod) {
			logger.V(2).Info("StatefulSet terminating unavailable Pod for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			if err := c.deletePod(ctx, set, pod); err != nil {
				return &r.status, err
			}
			r.status.CurrentReplicas--
		}
	}
	for target := len(r.replicas) - 1; target >= partition(set) && budget > 0; target-- {
		pod := r.replicas[target]
		if podRevision(pod) != r.update.Name && !isUnavailable(pod, minReady, r.now) {
			logger.V(2).Info("StatefulSet terminating Pod for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			if err := c.deletePod(ctx, set, pod); err != nil {
				return &r.status, err
			}
			budget--
			r.status.CurrentReplicas--
		}
	}
	return &r.status, nil
}
