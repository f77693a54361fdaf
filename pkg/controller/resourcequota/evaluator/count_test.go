package evaluator

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

func TestObjectCount(t *testing.T) {
	secrets := NewObjectCount(schema.GroupResource{Resource: "secrets"}, func(string) (int, error) { return 3, nil })
	widgets := NewObjectCount(schema.GroupResource{Group: "example.com", Resource: "widgets"}, func(string) (int, error) { return 2, nil })
	in := []corev1.ResourceName{"secrets", "count/secrets", "count/widgets.example.com", "configmaps", "widgets"}
	if got := secrets.MatchingResources(in); !quota.ToSet(got).Equal(quota.ToSet(in[:2])) {
		t.Errorf("secrets MatchingResources = %v", got)
	}
	if got := widgets.MatchingResources(in); len(got) != 1 || got[0] != "count/widgets.example.com" {
		t.Errorf("widgets MatchingResources = %v", got)
	}
	stats, err := secrets.UsageStats(quota.UsageStatsOptions{Resources: []corev1.ResourceName{"count/secrets"}})
	if err != nil {
		t.Fatal(err)
	}
	requireUsage(t, "secrets", quota.Mask(stats.Used, []corev1.ResourceName{"count/secrets", "secrets"}), rl("count/secrets", "3", "secrets", "3"))
	if got := stats.Used["count/secrets"]; got.String() != "3" {
		t.Errorf("count/secrets = %q", got.String())
	}
	// Counts match no scope, as upstream's generic evaluator.
	stats, _ = widgets.UsageStats(quota.UsageStatsOptions{Resources: []corev1.ResourceName{"count/widgets.example.com"},
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}})
	requireUsage(t, "scoped", stats.Used, rl("count/widgets.example.com", "0"))

	failing := NewObjectCount(schema.GroupResource{Resource: "configmaps"}, func(string) (int, error) { return 0, errors.New("boom") })
	stats, err = failing.UsageStats(quota.UsageStatsOptions{Resources: []corev1.ResourceName{"configmaps"}})
	if err == nil {
		t.Error("want the list error")
	}
	requireUsage(t, "failing", stats.Used, rl("configmaps", "0"))
}

func TestRegistry(t *testing.T) {
	count := func(string) (int, error) { return 0, nil }
	r := NewRegistry(NewServices(list()))
	if !r.AddIfAbsent(NewObjectCount(schema.GroupResource{Resource: "secrets"}, count)) {
		t.Error("AddIfAbsent(secrets) = false")
	}
	if r.AddIfAbsent(NewObjectCount(schema.GroupResource{Resource: "services"}, count)) {
		t.Error("AddIfAbsent replaced the services evaluator")
	}
	if got := r.List(); len(got) != 2 || got[0].GroupResource().Resource != "secrets" {
		t.Errorf("List = %v", got)
	}
	r.Remove(schema.GroupResource{Resource: "secrets"})
	if r.Get(schema.GroupResource{Resource: "secrets"}) != nil || len(r.List()) != 1 {
		t.Error("Remove left secrets")
	}
}
