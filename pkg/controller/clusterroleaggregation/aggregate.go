package clusterroleaggregation

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// listFunc lists ClusterRoles matching a selector (a lister's List).
type listFunc func(labels.Selector) ([]*rbacv1.ClusterRole, error)

// aggregate returns the rules of role's aggregation, in upstream's order:
// selectors in order; for each, the matching ClusterRoles other than role
// itself sorted by name; their rules in order; a rule semantically equal to
// one already collected is skipped. The result is never nil.
func aggregate(role *rbacv1.ClusterRole, list listFunc) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		parts, err := list(selector)
		if err != nil {
			return nil, err
		}
		// Sort a copy: the lister's slice is shared with the cache.
		parts = slices.Clone(parts)
		slices.SortFunc(parts, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
		for _, part := range parts {
			if part.Name == role.Name {
				continue
			}
			for _, rule := range part.Rules {
				if !containsRule(rules, rule) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules, nil
}

func containsRule(rules []rbacv1.PolicyRule, rule rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if equality.Semantic.DeepEqual(r, rule) {
			return true
		}
	}
	return false
}
