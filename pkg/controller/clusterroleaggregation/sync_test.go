package clusterroleaggregation

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller"
)

// newTestController returns a controller whose lister holds objs, on a fake
// clientset that also holds them.
func newTestController(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Rbac().V1().ClusterRoles()
	c, err := newController(ctx, "clusterrole-aggregation-controller", client.RbacV1(), inf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, o := range objs {
		if err := inf.Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

func TestSync(t *testing.T) {
	sel := map[string]string{"agg": "a"}
	part := role("part", sel, rule("get", "pods"))
	upToDate := aggregated("admin", sel)
	upToDate.Rules = []rbacv1.PolicyRule{rule("get", "pods")}
	badSelector := aggregated("bad")
	badSelector.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}},
	}}
	emptyAgg := aggregated("empty", map[string]string{"none": "x"})

	tests := []struct {
		name      string
		objs      []runtime.Object
		key       string
		wantApply bool
		wantRules []rbacv1.PolicyRule
		permanent bool
	}{
		{name: "missing role", key: "gone"},
		{name: "not aggregated", objs: []runtime.Object{part}, key: "part"},
		{name: "out of date", objs: []runtime.Object{part, aggregated("admin", sel)}, key: "admin", wantApply: true, wantRules: []rbacv1.PolicyRule{rule("get", "pods")}},
		{name: "up to date: no write", objs: []runtime.Object{part, upToDate}, key: "admin"},
		{name: "nothing matched and no rules: no write", objs: []runtime.Object{emptyAgg}, key: "empty"},
		{name: "invalid selector", objs: []runtime.Object{badSelector}, key: "bad", permanent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, client := newTestController(t, tc.objs...)
			err := c.sync(ctx, tc.key)
			if tc.permanent {
				if !controller.IsPermanent(err) {
					t.Fatalf("sync() = %v, want a permanent error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("sync() = %v", err)
			}
			var applies int
			for _, a := range client.Actions() {
				if a.GetVerb() == "patch" {
					applies++
				}
			}
			if tc.wantApply != (applies == 1) || applies > 1 {
				t.Fatalf("applies = %d, want apply %v (actions %v)", applies, tc.wantApply, client.Actions())
			}
			if !tc.wantApply {
				return
			}
			got, err := client.RbacV1().ClusterRoles().Get(context.Background(), tc.key, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Rules, tc.wantRules) {
				t.Errorf("rules = %#v, want %#v", got.Rules, tc.wantRules)
			}
		})
	}
}

func TestEnqueueOnlyAggregated(t *testing.T) {
	c, _ := newTestController(t, role("part", nil), aggregated("a1"), aggregated("a2"))
	logger, _ := ktesting.NewTestContext(t)
	c.enqueueAggregated(logger)
	if n := c.queue.Len(); n != 2 {
		t.Fatalf("queue has %d keys, want 2", n)
	}
	for range 2 {
		key, _ := c.queue.Get()
		if key != "a1" && key != "a2" {
			t.Errorf("queued %q", key)
		}
		c.queue.Done(key)
	}
}
