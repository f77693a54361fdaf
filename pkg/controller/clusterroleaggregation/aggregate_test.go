package clusterroleaggregation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func rule(verb string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: resources}
}

func role(name string, lbls map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Rules: rules}
}

func aggregated(name string, selectors ...map[string]string) *rbacv1.ClusterRole {
	r := role(name, nil)
	r.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		r.AggregationRule.ClusterRoleSelectors = append(r.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return r
}

func lister(roles ...*rbacv1.ClusterRole) listFunc {
	return func(sel labels.Selector) ([]*rbacv1.ClusterRole, error) {
		var out []*rbacv1.ClusterRole
		for _, r := range roles {
			if sel.Matches(labels.Set(r.Labels)) {
				out = append(out, r)
			}
		}
		return out, nil
	}
}

func TestAggregate(t *testing.T) {
	a := map[string]string{"agg": "a"}
	b := map[string]string{"agg": "b"}
	tests := []struct {
		name  string
		role  *rbacv1.ClusterRole
		roles []*rbacv1.ClusterRole
		want  []rbacv1.PolicyRule
	}{
		{
			name: "no parts gives an empty, non-nil list",
			role: aggregated("admin", a),
			want: []rbacv1.PolicyRule{},
		},
		{
			name: "parts sorted by name, rules in order",
			role: aggregated("admin", a),
			roles: []*rbacv1.ClusterRole{
				role("z", a, rule("get", "pods"), rule("list", "pods")),
				role("m", a, rule("delete", "pods")),
				role("other", nil, rule("watch", "pods")),
			},
			want: []rbacv1.PolicyRule{rule("delete", "pods"), rule("get", "pods"), rule("list", "pods")},
		},
		{
			name: "selectors in order, duplicates dropped",
			role: aggregated("admin", b, a),
			roles: []*rbacv1.ClusterRole{
				role("a1", a, rule("get", "pods"), rule("get", "secrets")),
				role("b1", b, rule("get", "secrets")),
				role("b2", b, rule("get", "secrets")),
			},
			want: []rbacv1.PolicyRule{rule("get", "secrets"), rule("get", "pods")},
		},
		{
			name: "a role matched by two selectors counts once",
			role: aggregated("admin", a, map[string]string{"x": "y"}),
			roles: []*rbacv1.ClusterRole{
				role("both", map[string]string{"agg": "a", "x": "y"}, rule("get", "pods")),
			},
			want: []rbacv1.PolicyRule{rule("get", "pods")},
		},
		{
			name: "the aggregated role itself is skipped",
			role: func() *rbacv1.ClusterRole {
				r := aggregated("admin", a)
				r.Labels = a
				r.Rules = []rbacv1.PolicyRule{rule("old")}
				return r
			}(),
			want: []rbacv1.PolicyRule{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := aggregate(tc.role, lister(append(tc.roles, tc.role)...))
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("aggregate() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestAggregateInvalidSelector(t *testing.T) {
	r := aggregated("admin")
	r.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}},
	}}
	if _, err := aggregate(r, lister()); err == nil {
		t.Fatal("want an error for an invalid selector")
	}
}
