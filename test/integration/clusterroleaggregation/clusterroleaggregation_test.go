// Package clusterroleaggregation tests the clusterrole-aggregation-controller
// against a real kube-apiserver.
package clusterroleaggregation

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/clusterroleaggregation"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func rule(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

func TestAggregatedRoleFollowsParts(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	roles := client.RbacV1().ClusterRoles()

	cc := framework.NewControllerContext(t, cfg)
	c, err := clusterroleaggregation.New(ctx, cc, names.ClusterRoleAggregation)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != names.ClusterRoleAggregation {
		t.Errorf("Name() = %q", c.Name())
	}
	stop := framework.StartController(t, cc, c)

	lbl := map[string]string{"kcm-test/aggregate-to": "agg"}
	part := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		r, err := roles.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}, Rules: rules}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	part("kcm-test-part-b", rule("get", "pods"), rule("list", "pods"))
	if _, err := roles.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta:      metav1.ObjectMeta{Name: "kcm-test-agg"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: lbl}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitForRules := func(want ...rbacv1.PolicyRule) {
		t.Helper()
		framework.Eventually(t, timeout, func() (bool, error) {
			got, err := roles.Get(ctx, "kcm-test-agg", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return equality.Semantic.DeepEqual(got.Rules, want), nil
		})
	}
	waitForRules(rule("get", "pods"), rule("list", "pods"))

	// Add a part that sorts first and repeats a rule.
	a := part("kcm-test-part-a", rule("watch", "pods"), rule("get", "pods"))
	waitForRules(rule("watch", "pods"), rule("get", "pods"), rule("list", "pods"))

	// Change a part.
	a.Rules = []rbacv1.PolicyRule{rule("delete", "pods")}
	if _, err := roles.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(rule("delete", "pods"), rule("get", "pods"), rule("list", "pods"))

	// Remove a part.
	if err := roles.Delete(ctx, "kcm-test-part-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(rule("delete", "pods"))

	// The rules are owned by upstream's field manager.
	got, err := roles.Get(ctx, "kcm-test-agg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managed bool
	for _, m := range got.ManagedFields {
		managed = managed || (m.Manager == clusterroleaggregation.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !managed {
		t.Errorf("no apply entry by %q in managedFields: %+v", clusterroleaggregation.FieldManager, got.ManagedFields)
	}

	// Unlabel the last part: the aggregate ends up empty.
	a, err = roles.Get(ctx, "kcm-test-part-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Labels = nil
	if _, err := roles.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules()
	stop()
}
