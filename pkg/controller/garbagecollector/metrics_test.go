package garbagecollector

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
)

// preferredOnly serves the preferred resources it holds.
type preferredOnly struct {
	discovery.ServerResourcesInterface
	resources []*metav1.APIResourceList
}

func (d *preferredOnly) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return d.resources, nil
}

func syncErrors(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(resourcesSyncErrors)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestResourcesSyncErrorCountsEmptyDiscoveryAndUnmappableResources(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	registerMetrics()
	disco := &preferredOnly{}
	c := newController("garbage-collector-controller", 1, nil, disco, testMapper{meta.NewDefaultRESTMapper(nil)}, nil, nil, nil, nil)

	before := syncErrors(t)
	if got := c.syncResources(ctx, nil); len(got) != 0 {
		t.Fatalf("resources after empty discovery = %v", got)
	}
	if d := syncErrors(t) - before; d != 1 {
		t.Fatalf("empty discovery: resources_sync_error_total grew by %v, want 1", d)
	}

	// A deletable resource the RESTMapper does not know: the round fails
	// and is not recorded, so the next tick tries again.
	disco.resources = []*metav1.APIResourceList{{
		GroupVersion: "example.com/v1",
		APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: metav1.Verbs{"delete", "list", "watch"}}},
	}}
	for i := 1; i <= 2; i++ {
		if got := c.syncResources(ctx, nil); got != nil {
			t.Fatalf("round %d: recorded resources %v after a failed monitor sync", i, got)
		}
		if d := syncErrors(t) - before; d != float64(1+i) {
			t.Fatalf("round %d: resources_sync_error_total grew by %v, want %d", i, d, 1+i)
		}
	}

	// What the last good round recorded is kept.
	old := resourceSet{{Version: "v1", Resource: "configmaps"}: {}}
	if got := c.syncResources(ctx, old); len(got) != 1 {
		t.Fatalf("recorded resources = %v, want the old ones", got)
	}
}
