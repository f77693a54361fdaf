package informerfanout

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// recorder counts the events a handler saw, by pod name.
type recorder struct {
	mu      sync.Mutex
	added   map[string]bool
	initial int
	updated int
	deleted int
}

func newRecorder() *recorder { return &recorder{added: map[string]bool{}} }

func (r *recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.added[obj.(*corev1.Pod).Name] = true
			if initial {
				r.initial++
			}
		},
		UpdateFunc: func(_, _ any) { r.mu.Lock(); r.updated++; r.mu.Unlock() },
		DeleteFunc: func(any) { r.mu.Lock(); r.deleted++; r.mu.Unlock() },
	}
}

func (r *recorder) snapshot() (added, initial, updated, deleted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.added), r.initial, r.updated, r.deleted
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func TestFanOut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(pod("before"))
	f := NewFactory(informers.NewSharedInformerFactory(client, 0))
	inf := f.Core().V1().Pods().Informer()
	a, b, removed, late := newRecorder(), newRecorder(), newRecorder(), newRecorder()
	regA, err := inf.AddEventHandler(a.handler())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := regA.(*registration); !ok {
		t.Fatalf("a handler added before Start got %T, not the shared listener", regA)
	}
	// Through another typed wrapper of the same informer, without resyncs.
	regB, err := f.Core().V1().Pods().Informer().AddEventHandlerWithResyncPeriod(b.handler(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rb, ok := regB.(*registration); !ok || rb.group == regA.(*registration).group {
		t.Fatalf("a handler without resyncs got %T; want a registration on a listener of its own period", regB)
	}
	regRemoved, err := inf.AddEventHandler(removed.handler())
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(regRemoved); err != nil {
		t.Fatal(err)
	}

	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), regA.HasSynced, regB.HasSynced) {
		t.Fatal("not synced")
	}
	if added, initial, _, _ := a.snapshot(); added != 1 || initial != 1 {
		t.Fatalf("after sync, a saw %d adds (%d initial), want the one initial pod", added, initial)
	}
	regLate, err := inf.AddEventHandler(late.handler())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := regLate.(*registration); ok {
		t.Fatal("a handler added after Start shares the listener; it would miss the cache's replay")
	}

	pods := client.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, pod("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := pod("after")
	p.Labels = map[string]string{"x": "y"}
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	for name, r := range map[string]*recorder{"a": a, "b": b, "late": late} {
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			added, _, updated, deleted := r.snapshot()
			return added == 2 && updated == 1 && deleted == 1, nil
		})
		if err != nil {
			added, initial, updated, deleted := r.snapshot()
			t.Errorf("handler %s saw %d adds (%d initial), %d updates, %d deletes; want 2, 1, 1", name, added, initial, updated, deleted)
		}
	}
	if added, _, updated, deleted := removed.snapshot(); added+updated+deleted != 0 {
		t.Errorf("a removed handler saw %d events", added+updated+deleted)
	}
}
