package resourcequota

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kcm-dev/kcm/internal/controller/resourcemonitor"
)

func drain(q workqueue.TypedRateLimitingInterface[string]) []string {
	var out []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		q.Forget(k)
		out = append(out, k)
	}
	return out
}

// New quotas, and quotas whose status lacks their limits or the usage of a
// measured limit, go to the priority queue; others to the primary one.
func TestAddQuotaRouting(t *testing.T) {
	f := newFixture(t)
	upToDate := newQuota("up-to-date", rl("pods", "1"))
	upToDate.Status = corev1.ResourceQuotaStatus{Hard: rl("pods", "1"), Used: rl("pods", "0")}
	missingUsed := newQuota("missing-used", rl("pods", "1"))
	missingUsed.Status = corev1.ResourceQuotaStatus{Hard: rl("pods", "1")}
	unmeasured := newQuota("unmeasured", rl("example.com/foo", "1"))
	unmeasured.Status = corev1.ResourceQuotaStatus{Hard: rl("example.com/foo", "1")}
	for _, q := range []*corev1.ResourceQuota{newQuota("new", rl("pods", "1")), upToDate, missingUsed, unmeasured} {
		f.c.addQuota(f.c.logger, q)
	}
	if got := drain(f.c.priority); len(got) != 2 || got[0] != "ns/new" || got[1] != "ns/missing-used" {
		t.Errorf("priority queue = %v", got)
	}
	if got := drain(f.c.queue); len(got) != 2 || got[0] != "ns/up-to-date" || got[1] != "ns/unmeasured" {
		t.Errorf("primary queue = %v", got)
	}
}

// Only a change of spec.hard queues an updated quota; a deleted one is
// queued (its sync finds it gone).
func TestQuotaHandlers(t *testing.T) {
	f := newFixture(t)
	h := f.c.quotaHandlers(f.c.logger)
	old := newQuota("q", rl("pods", "1"))
	old.Status = corev1.ResourceQuotaStatus{Hard: rl("pods", "1"), Used: rl("pods", "0")}
	statusOnly := old.DeepCopy()
	statusOnly.Status.Used = rl("pods", "1")
	sameValue := old.DeepCopy()
	sameValue.Spec.Hard = rl("pods", "1000m")
	h.OnUpdate(old, statusOnly)
	h.OnUpdate(old, sameValue)
	if n := f.c.queue.Len() + f.c.priority.Len(); n != 0 {
		t.Errorf("queued %d keys for updates that leave spec.hard's values alone", n)
	}
	raised := old.DeepCopy()
	raised.Spec.Hard = rl("pods", "2")
	h.OnUpdate(old, raised)
	if got := drain(f.c.priority); len(got) != 1 {
		t.Errorf("raised limit: priority queue = %v", got)
	}
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/q", Obj: old})
	if got := drain(f.c.queue); len(got) != 1 || got[0] != "ns/q" {
		t.Errorf("deleted: primary queue = %v", got)
	}
}

// A deleted pod queues the quotas of its namespace that track pods; a
// quota on Services only, or in another namespace, stays.
func TestReplenishment(t *testing.T) {
	pods := newQuota("pods", rl("pods", "1"))
	pods.Status.Hard = rl("pods", "1")
	cpu := newQuota("cpu", rl("requests.cpu", "1"))
	cpu.Status.Hard = rl("requests.cpu", "1")
	services := newQuota("services", rl("services", "1"))
	services.Status.Hard = rl("services", "1")
	elsewhere := newQuota("elsewhere", rl("pods", "1"))
	elsewhere.Namespace, elsewhere.Status.Hard = "other", rl("pods", "1")
	f := newFixture(t, pods, cpu, services, elsewhere)
	h, err := f.c.monitorHandler(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if err != nil {
		t.Fatal(err)
	}
	running := newPod("p", "1")
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: running})
	if got := drain(f.c.queue); len(got) != 2 {
		t.Errorf("after a pod deletion: queue = %v, want the pods and cpu quotas", got)
	}
	relabelled := running.DeepCopy()
	relabelled.Labels = map[string]string{"x": "y"}
	h.OnUpdate(running, relabelled)
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("a relabelled pod queued %d quotas", n)
	}
	succeeded := running.DeepCopy()
	succeeded.Status.Phase = corev1.PodSucceeded
	h.OnUpdate(running, succeeded)
	if got := drain(f.c.queue); len(got) != 2 {
		t.Errorf("after a pod succeeded: queue = %v", got)
	}
}

// Discovery: each quotable resource but the ignored ones gets a monitor
// and, without an evaluator of its own, an object count one; a resource
// gone loses both unless its group's discovery failed.
func TestSyncResources(t *testing.T) {
	f := newFixture(t)
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	if _, _, ok := f.c.monitors.Informer(schema.GroupResource{Resource: "events"}); ok {
		t.Error("events are monitored")
	}
	if f.c.registry.Get(schema.GroupResource{Resource: "bindings"}) != nil {
		t.Error("bindings got an evaluator")
	}
	old := f.c.syncResources(f.ctx, nil)
	withWidgets := append(f.disco.resources, &metav1.APIResourceList{GroupVersion: "example.com/v1",
		APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: true, Verbs: quotable}}})
	f.disco.resources = withWidgets
	cur := f.c.syncResources(f.ctx, old)
	if _, ok := cur[widgets]; !ok || f.c.registry.Get(widgets.GroupResource()) == nil {
		t.Fatalf("widgets: followed %v, evaluator %v", ok, f.c.registry.Get(widgets.GroupResource()))
	}
	// The group fails discovery: widgets are kept.
	f.disco.resources = withWidgets[:1]
	f.disco.err = &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{widgets.GroupVersion(): errors.New("down")}}
	if kept := f.c.syncResources(f.ctx, cur); !hasResource(kept, widgets) || f.c.registry.Get(widgets.GroupResource()) == nil {
		t.Error("widgets dropped while their group's discovery failed")
	}
	// The CRD is gone.
	f.disco.err = nil
	gone := f.c.syncResources(f.ctx, cur)
	if hasResource(gone, widgets) || f.c.registry.Get(widgets.GroupResource()) != nil {
		t.Error("widgets still followed after they left discovery")
	}
	if f.c.registry.Get(schema.GroupResource{Resource: "secrets"}) == nil {
		t.Error("the legacy secrets evaluator went")
	}
	// Discovery failing whole keeps everything.
	f.disco.resources, f.disco.err = nil, errors.New("unavailable")
	if kept := f.c.syncResources(f.ctx, gone); len(kept) != len(gone) {
		t.Errorf("after a failed discovery: %d resources, want %d", len(kept), len(gone))
	}
}

func hasResource(s resourcemonitor.Set, r schema.GroupVersionResource) bool {
	_, ok := s[r]
	return ok
}
