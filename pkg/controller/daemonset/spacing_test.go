package daemonset

import (
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller"
)

func spaced(f *fixture) *fixture {
	f.c.statusSpacer = controller.NewSpacer(time.Second, f.clock)
	return f
}

// TestStatusSpacing: a status that only moves counters is written at most
// once a second; a new observedGeneration and the goal are written at once.
func TestStatusSpacing(t *testing.T) {
	ds := newDS(withStatus(apps.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 2, CurrentNumberScheduled: 1, NumberUnavailable: 2}))
	rest := []runtime.Object{newNode("a"), newNode("b"), currentRevision(t, ds, 1), daemonPod(ds, "pa", "a"), daemonPod(ds, "pb", "b")}
	f := spaced(newFixture(t, objs(ds, rest...)...))
	f.c.statusSpacer.Wrote("ns/web")
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusUpdates()); n != 0 {
		t.Fatalf("%d status writes within the period", n)
	}
	if f.c.queue.Len() != 0 {
		t.Error("requeued at once instead of after the period")
	}
	f.clock.Step(time.Second)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if st := f.statusUpdates(); len(st) != 1 || st[0].Status.CurrentNumberScheduled != 2 {
		t.Fatalf("status writes after the period: %v", st)
	}

	// The goal (both pods ready and available) is not held back.
	settledPods := []runtime.Object{newNode("a"), newNode("b"), currentRevision(t, ds, 1), daemonPod(ds, "pa", "a", ready), daemonPod(ds, "pb", "b", ready)}
	f = spaced(newFixture(t, objs(ds, settledPods...)...))
	f.c.statusSpacer.Wrote("ns/web")
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if st := f.statusUpdates(); len(st) != 1 || !settled(st[0].Status) {
		t.Errorf("goal status writes: %v", st)
	}
}

func TestPodEventsSpaced(t *testing.T) {
	ds := newDS(withStatus(apps.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, UpdatedNumberScheduled: 3}))
	f := spaced(newFixture(t, ds))
	logger, _ := ktesting.NewTestContext(t)
	f.c.statusSpacer.Wrote("ns/web")
	f.c.expectations.ExpectCreations(logger, "ns/web", 2)

	// The first of two creations observed: status only, spaced.
	f.c.addPod(logger, daemonPod(ds, "p1", "a"))
	if f.c.queue.Len() != 0 {
		t.Error("a creation with one more expected was synced at once")
	}
	// The last one: the sync may act.
	f.c.addPod(logger, daemonPod(ds, "p2", "b"))
	if got := drain(t, f.c.queue); len(got) != 1 {
		t.Errorf("the last expected creation queued %v", got)
	}

	p := daemonPod(ds, "p1", "a")
	readyPod := p.DeepCopy()
	readyPod.ResourceVersion = "2"
	ready(readyPod)
	// Not rolling, not the last ready pod: spaced.
	f.add(t, readyPod)
	f.add(t, daemonPod(ds, "p2", "b"))
	f.c.updatePod(logger, p, readyPod)
	if f.c.queue.Len() != 0 {
		t.Error("a readiness change that only moves counters was synced at once")
	}
	// A failure is acted on at once.
	failed := readyPod.DeepCopy()
	failed.ResourceVersion = "3"
	failed.Status.Phase = v1.PodFailed
	f.c.updatePod(logger, readyPod, failed)
	if f.c.queue.Len() != 1 {
		t.Error("a failed pod was not synced at once")
	}
	drain(t, f.c.queue)
	// While rolling, readiness is acted on at once.
	rollingDS := ds.DeepCopy()
	rollingDS.Status.UpdatedNumberScheduled = 1
	if !mayAct(rollingDS, p, readyPod) {
		t.Error("readiness during a rollout: not acted on")
	}
	old := p.DeepCopy()
	oldRevision(old)
	oldReady := readyPod.DeepCopy()
	oldRevision(oldReady)
	if !mayAct(ds, old, oldReady) {
		t.Error("readiness of an old pod: not acted on")
	}
	// The scheduler binding a pod to the node it is pinned to: spaced.
	pending := daemonPod(ds, "p3", "c", unbound)
	boundPod := daemonPod(ds, "p3", "c")
	boundPod.ResourceVersion = "2"
	if mayAct(ds, pending, boundPod) {
		t.Error("binding to the pinned node: acted on")
	}
	// A pod whose node changes (an adopted pod without the pin): at once.
	moved := boundPod.DeepCopy()
	moved.Spec.Affinity = nil
	unpinned := moved.DeepCopy()
	unpinned.Spec.NodeName = ""
	if !mayAct(ds, unpinned, moved) {
		t.Error("a pod without a pin bound to a node: not acted on")
	}
}

// TestLastReadyPodSyncedAtOnce: a pod turning ready is synced at once
// when every other pod of a DaemonSet whose written status has an updated
// pod on every node is ready, even though the written NumberReady lags by
// more than one; while another pod is not ready, it is spaced.
func TestLastReadyPodSyncedAtOnce(t *testing.T) {
	// Written when none was ready yet.
	ds := newDS(withStatus(apps.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberUnavailable: 3}))
	logger, _ := ktesting.NewTestContext(t)
	for _, tc := range []struct {
		name      string
		otherOpts []podOpt // of p2; p1 is ready
		minReady  int32
		want      int // keys queued at once
	}{
		{name: "the last one", otherOpts: []podOpt{ready}, want: 1},
		{name: "another not ready", want: 0},
		{name: "another not ready but terminating", otherOpts: []podOpt{func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }}, want: 1},
		{name: "minReadySeconds", otherOpts: []podOpt{ready}, minReady: 10, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := ds.DeepCopy()
			ds.Spec.MinReadySeconds = tc.minReady
			f := spaced(newFixture(t, objs(ds, daemonPod(ds, "p1", "a", ready), daemonPod(ds, "p2", "b", tc.otherOpts...))...))
			f.c.statusSpacer.Wrote("ns/web")
			p3 := daemonPod(ds, "p3", "c")
			readyP3 := p3.DeepCopy()
			readyP3.ResourceVersion = "2"
			ready(readyP3)
			f.add(t, readyP3)
			f.c.updatePod(logger, p3, readyP3)
			if got := f.c.queue.Len(); got != tc.want {
				t.Errorf("%d keys queued at once, want %d", got, tc.want)
			}
		})
	}
}
