package resourcequota

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/kcm-dev/kcm/internal/controller"
)

func TestSyncWritesHardAndUsed(t *testing.T) {
	done := newPod("done", "4")
	done.Status.Phase = corev1.PodSucceeded
	q := newQuota("q", rl("pods", "10", "requests.cpu", "4", "count/pods", "10", "services", "5",
		"services.nodeports", "2", "secrets", "3", "count/configmaps", "3", "example.com/unknown", "1"))
	f := newFixture(t, q, newPod("a", "1"), newPod("b", "500m"), done,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "other"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}})
	if err := f.c.sync(f.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	writes := f.statusWrites()
	if len(writes) != 1 {
		t.Fatalf("status writes = %d, want 1", len(writes))
	}
	got := writes[0].Status
	if !quota.Equals(got.Hard, q.Spec.Hard) {
		t.Errorf("status.hard = %v", got.Hard)
	}
	want := rl("pods", "2", "requests.cpu", "1500m", "count/pods", "3", "services", "1", "services.nodeports", "1",
		"secrets", "1", "count/configmaps", "1")
	if !quota.Equals(got.Used, want) {
		t.Errorf("status.used = %v, want %v", got.Used, want)
	}
}

// A sync that would write the same status writes nothing.
func TestSyncSkipsUnchangedStatus(t *testing.T) {
	q := newQuota("q", rl("pods", "10"))
	q.Status = corev1.ResourceQuotaStatus{Hard: rl("pods", "10"), Used: rl("pods", "1")}
	f := newFixture(t, q, newPod("a", ""))
	if err := f.c.sync(f.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusWrites()); n != 0 {
		t.Errorf("status writes = %d, want none", n)
	}
	// A changed limit is written even if usage is the same.
	q2 := f.quota("q").DeepCopy()
	q2.Spec.Hard = rl("pods", "20")
	if err := f.c.syncQuota(f.ctx, q2); err != nil {
		t.Fatal(err)
	}
	if w := f.statusWrites(); len(w) != 1 || !quota.Equals(w[0].Status.Hard, rl("pods", "20")) {
		t.Errorf("status writes = %v", w)
	}
}

// Usage of limits no evaluator measures is kept, and limits removed from
// the spec leave status.used.
func TestSyncKeepsUnmeasuredUsageAndMasks(t *testing.T) {
	q := newQuota("q", rl("pods", "10", "example.com/foo", "3"))
	q.Status = corev1.ResourceQuotaStatus{Hard: rl("pods", "10", "example.com/foo", "3", "services", "1"),
		Used: rl("pods", "5", "example.com/foo", "2", "services", "1")}
	f := newFixture(t, q)
	if err := f.c.sync(f.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	w := f.statusWrites()
	if len(w) != 1 || !quota.Equals(w[0].Status.Used, rl("pods", "0", "example.com/foo", "2")) {
		t.Errorf("status writes = %v", w)
	}
}

func TestSyncScopes(t *testing.T) {
	bestEffort := newPod("be", "")
	terminating := newPod("t", "1")
	terminating.Spec.ActiveDeadlineSeconds = new(int64)
	high := newPod("high", "2")
	high.Spec.PriorityClassName = "high"
	scoped := newQuota("terminating", rl("pods", "10", "requests.cpu", "10"))
	scoped.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
	be := newQuota("besteffort", rl("pods", "10"))
	be.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	prio := newQuota("prio", rl("pods", "10", "requests.cpu", "10"))
	prio.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
	f := newFixture(t, scoped, be, prio, bestEffort, terminating, high)
	for name, want := range map[string]corev1.ResourceList{
		"terminating": rl("pods", "1", "requests.cpu", "1"),
		"besteffort":  rl("pods", "1"),
		"prio":        rl("pods", "1", "requests.cpu", "2"),
	} {
		f.client.ClearActions()
		if err := f.c.sync(f.ctx, "ns/"+name); err != nil {
			t.Fatal(err)
		}
		if w := f.statusWrites(); len(w) != 1 || !quota.Equals(w[0].Status.Used, want) {
			t.Errorf("%s: status writes = %v, want used %v", name, w, want)
		}
	}
}

// A resource whose cache has not synced leaves its usage as it was; the
// rest is written, and the key is not retried (it is queued again when
// the cache syncs).
func TestSyncWithUnsyncedResource(t *testing.T) {
	q := newQuota("q", rl("pods", "10", "count/widgets.example.com", "5"))
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: rl("pods", "3", "count/widgets.example.com", "4")}
	f := newFixture(t, q)
	f.c.registry.AddIfAbsent(newUnsyncedCount(f.c))
	err := f.c.sync(f.ctx, "ns/q")
	if !errors.Is(err, errNotSynced) || !controller.IsPermanent(err) {
		t.Errorf("sync = %v, want a permanent not-synced error", err)
	}
	if w := f.statusWrites(); len(w) != 1 || !quota.Equals(w[0].Status.Used, rl("pods", "0", "count/widgets.example.com", "4")) {
		t.Errorf("status writes = %v", w)
	}
}

func TestSyncDeletedQuota(t *testing.T) {
	f := newFixture(t)
	if err := f.c.sync(f.ctx, "ns/gone"); err != nil {
		t.Errorf("sync of a deleted quota = %v", err)
	}
}
