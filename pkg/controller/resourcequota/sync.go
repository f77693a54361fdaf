package resourcequota

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
)

// sync recalculates one quota.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	q, err := c.lister.ResourceQuotas(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.Info("Resource quota has been deleted", "key", key)
		return nil
	}
	if err != nil {
		return err
	}
	return c.syncQuota(ctx, q)
}

// syncQuota sets status.hard to spec.hard and status.used to the usage of
// every limit an evaluator can measure now; the usage of the others is
// kept as it was. It writes only when something changed. Limits left
// unmeasured because a cache has not synced are reported without a retry:
// the quota is queued again once the cache synced.
func (c *Controller) syncQuota(ctx context.Context, q *corev1.ResourceQuota) error {
	dirty := !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) ||
		q.Status.Hard == nil || q.Status.Used == nil

	used := corev1.ResourceList{}
	if q.Status.Used != nil {
		used = quota.Add(corev1.ResourceList{}, q.Status.Used)
	}
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)

	newUsage, usageErr := c.calculateUsage(q.Namespace, q.Spec.Scopes, hard, q.Spec.ScopeSelector)
	for name, value := range newUsage {
		used[name] = value
	}
	used = quota.Mask(used, quota.ResourceNames(hard))

	dirty = dirty || !quota.Equals(used, q.Status.Used)
	if dirty {
		update := q.DeepCopy()
		update.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
		if _, err := c.client.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil {
			return errors.Join(usageErr, err)
		}
		klog.FromContext(ctx).V(2).Info("Updated resource quota status", "resourceQuota", klog.KObj(q))
	}
	if usageErr != nil && onlyNotSynced(usageErr) {
		return controller.Permanent(usageErr)
	}
	return usageErr
}

// calculateUsage measures, with every evaluator that matches one of the
// hard limits, the usage of the namespace's objects under the quota's
// scopes and scope selector; its result holds only the limits measured.
// An evaluator that fails (or whose cache has not synced) leaves its
// limits out and adds its error. Upstream's quota.CalculateUsage, with the
// cache check first.
func (c *Controller) calculateUsage(namespace string, scopes []corev1.ResourceQuotaScope, hard corev1.ResourceList,
	selector *corev1.ScopeSelector) (corev1.ResourceList, error) {
	hardNames := quota.ResourceNames(hard)
	evaluators := c.registry.List()
	var potential []corev1.ResourceName
	for _, e := range evaluators {
		potential = append(potential, e.MatchingResources(hardNames)...)
	}
	matched := quota.Intersection(hardNames, potential)

	var errs []error
	usage := corev1.ResourceList{}
	for _, e := range evaluators {
		names := e.MatchingResources(matched)
		if len(names) == 0 {
			continue
		}
		stats, err := c.usageStats(e, quota.UsageStatsOptions{
			Namespace: namespace, Scopes: scopes, Resources: names, ScopeSelector: selector})
		if err != nil {
			errs = append(errs, err)
			matched = quota.Difference(matched, names)
			continue
		}
		usage = quota.Add(usage, stats.Used)
	}
	return quota.Mask(usage, matched), errors.Join(errs...)
}

func (c *Controller) usageStats(e evaluator.Evaluator, options quota.UsageStatsOptions) (quota.UsageStats, error) {
	gr := e.GroupResource()
	if !c.measurable(gr) {
		return quota.UsageStats{}, fmt.Errorf("usage of %v: %w", gr, errNotSynced)
	}
	return e.UsageStats(options)
}

// onlyNotSynced reports whether every error joined in err is errNotSynced.
func onlyNotSynced(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !onlyNotSynced(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, errNotSynced)
}
