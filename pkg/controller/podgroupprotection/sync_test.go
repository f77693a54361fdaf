package podgroupprotection

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

func podGroup(deleting bool, finalizers ...string) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "ns", Finalizers: finalizers}}
	if deleting {
		pg.DeletionTimestamp = &metav1.Time{}
	}
	return pg
}

func pod(name, ns, group string, phase v1.PodPhase) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)}, Status: v1.PodStatus{Phase: phase}}
	if group != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	}
	return p
}

func newTestController(t *testing.T, objs ...any) (*Controller, *fake.Clientset, context.Context) {
	t.Helper()
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	_, ctx := ktesting.NewTestContext(t)
	c, err := NewController(ctx, "test", client, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *schedulingv1beta1.PodGroup:
			if err := client.Tracker().Add(o); err != nil {
				t.Fatal(err)
			}
			if err := f.Scheduling().V1beta1().PodGroups().Informer().GetIndexer().Add(o); err != nil {
				t.Fatal(err)
			}
		case *v1.Pod:
			if err := c.podIndexer.Add(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c, client, ctx
}

func TestSync(t *testing.T) {
	tests := []struct {
		name          string
		pg            *schedulingv1beta1.PodGroup
		pods          []*v1.Pod
		wantFinalizer bool
		wantWrites    int
	}{
		{name: "removed when no pod names it", pg: podGroup(true, Finalizer, "other"), wantWrites: 1},
		{name: "kept for a pending pod", pg: podGroup(true, Finalizer), wantFinalizer: true,
			pods: []*v1.Pod{pod("p", "ns", "pg", v1.PodPending)}},
		{name: "kept for a running pod", pg: podGroup(true, Finalizer), wantFinalizer: true,
			pods: []*v1.Pod{pod("p", "ns", "pg", v1.PodRunning)}},
		{name: "removed when its pods are done", pg: podGroup(true, Finalizer), wantWrites: 1,
			pods: []*v1.Pod{pod("a", "ns", "pg", v1.PodSucceeded), pod("b", "ns", "pg", v1.PodFailed)}},
		{name: "removed when pods name other groups or namespaces", pg: podGroup(true, Finalizer), wantWrites: 1,
			pods: []*v1.Pod{pod("a", "ns", "other", v1.PodRunning), pod("b", "other-ns", "pg", v1.PodRunning), pod("c", "ns", "", v1.PodRunning)}},
		{name: "live group untouched, finalizer not added", pg: podGroup(false)},
		{name: "live group keeps its finalizer", pg: podGroup(false, Finalizer), wantFinalizer: true},
		{name: "deleting group without the finalizer untouched", pg: podGroup(true, "other")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []any{tt.pg}
			for _, p := range tt.pods {
				objs = append(objs, p)
			}
			c, client, ctx := newTestController(t, objs...)
			client.ClearActions()
			if err := c.sync(ctx, "ns/pg"); err != nil {
				t.Fatal(err)
			}
			writes := 0
			for _, a := range client.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
					writes++
				}
			}
			if writes != tt.wantWrites {
				t.Errorf("%d writes, want %d: %v", writes, tt.wantWrites, client.Actions())
			}
			got, err := client.SchedulingV1beta1().PodGroups("ns").Get(ctx, "pg", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if has := slices.Contains(got.Finalizers, Finalizer); has != tt.wantFinalizer {
				t.Errorf("finalizers %v, want protection %v", got.Finalizers, tt.wantFinalizer)
			}
			if tt.wantWrites > 0 && !slices.Contains(got.Finalizers, "other") && slices.Contains(tt.pg.Finalizers, "other") {
				t.Errorf("finalizers %v: another controller's finalizer was removed", got.Finalizers)
			}
		})
	}
}

func TestSyncMissingGroup(t *testing.T) {
	c, client, ctx := newTestController(t)
	if err := c.sync(ctx, "ns/gone"); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d requests for a missing PodGroup: %v", n, client.Actions())
	}
}
