package clusterroleaggregation

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// sync recomputes the rules of the aggregated ClusterRole named name and
// applies them when they differ from the current ones.
func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting ClusterRole %s: %w", name, err)
	}
	if !isAggregated(role) {
		return nil
	}
	rules, err := aggregate(role, c.lister.List)
	if err != nil {
		// An invalid selector stays invalid until the role is edited,
		// which enqueues it again.
		return controller.Permanent(fmt.Errorf("ClusterRole %s: %w", name, err))
	}
	// Semantic equality treats nil and empty rule lists as equal.
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Updating aggregated ClusterRole rules", "clusterRole", klog.KObj(role), "rules", len(rules))
	apply := rbacv1ac.ClusterRole(name).WithRules(toApply(rules)...)
	_, err = c.client.ClusterRoles().Apply(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying rules of ClusterRole %s: %w", name, err)
	}
	return nil
}

func toApply(rules []rbacv1.PolicyRule) []*rbacv1ac.PolicyRuleApplyConfiguration {
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, r := range rules {
		a := rbacv1ac.PolicyRule()
		a.Verbs = r.Verbs
		a.APIGroups = r.APIGroups
		a.Resources = r.Resources
		a.ResourceNames = r.ResourceNames
		a.NonResourceURLs = r.NonResourceURLs
		out = append(out, a)
	}
	return out
}
