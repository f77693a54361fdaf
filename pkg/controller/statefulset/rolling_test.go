package statefulset

import (
	"slices"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func newImage(image string) func(*apps.StatefulSet) {
	return func(s *apps.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = image }
}

// deletedPods returns the names of the pods the last sync deleted.
func (f *fixture) deletedPods() []string {
	var out []string
	for _, w := range f.writes() {
		if name, ok := strings.CutPrefix(w, "delete pods "); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func TestRollingUpdateWithPartition(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(4, withPartition(2)))
	f.converge()
	oldRev := f.revisions()[0].Name
	f.updateSet(newImage("nginx:2"))
	f.mustSync()
	revs := f.revisions()
	if len(revs) != 2 || revs[1].Revision != 2 {
		t.Fatalf("revisions %v", revs)
	}
	newRev := revs[1].Name
	if got := f.deletedPods(); !slices.Equal(got, []string{"web-3"}) {
		t.Fatalf("first step deleted %v, want web-3", got)
	}
	st := f.set().Status
	if st.CurrentRevision != oldRev || st.UpdateRevision != newRev || st.CurrentReplicas != 3 || st.UpdatedReplicas != 0 {
		t.Errorf("status during the update: %+v", st)
	}
	f.converge()
	if got := f.podRevisions(); !slices.Equal(got, []string{oldRev, oldRev, newRev, newRev}) {
		t.Fatalf("revisions of pods %v: the partition keeps web-0 and web-1", got)
	}
	st = f.set().Status
	if st.CurrentRevision != oldRev || st.UpdatedReplicas != 2 || st.CurrentReplicas != 2 {
		t.Errorf("status with a partition: %+v", st)
	}
	// Lowering the partition completes the update.
	f.updateSet(func(s *apps.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0) })
	f.converge()
	if got := f.podRevisions(); !slices.Equal(got, []string{newRev, newRev, newRev, newRev}) {
		t.Fatalf("revisions of pods %v", got)
	}
	st = f.set().Status
	if st.CurrentRevision != newRev || st.CurrentReplicas != 4 || st.UpdatedReplicas != 4 {
		t.Errorf("completed status: %+v", st)
	}
}

func TestRollingUpdateWaitsForReplacement(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(3))
	f.converge()
	f.updateSet(newImage("nginx:2"))
	f.mustSync()
	if got := f.deletedPods(); !slices.Equal(got, []string{"web-2"}) {
		t.Fatalf("deleted %v", got)
	}
	f.mustSync() // recreates web-2 at the new revision
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Fatalf("pods %s", got)
	}
	f.mustSync() // web-2 pending: nothing
	if got := f.deletedPods(); len(got) != 0 {
		t.Fatalf("deleted %v while web-2 is pending", got)
	}
	f.setPod("web-2", v1.PodRunning, true)
	f.mustSync()
	if got := f.deletedPods(); !slices.Equal(got, []string{"web-1"}) {
		t.Fatalf("deleted %v", got)
	}
}

func TestMaxUnavailable(t *testing.T) {
	tests := []struct {
		name        string
		opts        []setOpt
		gates       Features
		unready     []string
		wantDeleted []string
	}{
		{name: "two at a time", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(2))}, gates: defaultGates,
			wantDeleted: []string{"web-3", "web-4"}},
		{name: "percent rounds down, at least one", opts: []setOpt{withMaxUnavailable(intstr.FromString("10%"))}, gates: defaultGates,
			wantDeleted: []string{"web-4"}},
		{name: "40% of 5", opts: []setOpt{withMaxUnavailable(intstr.FromString("40%"))}, gates: defaultGates,
			wantDeleted: []string{"web-3", "web-4"}},
		{name: "gate off: one", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(3))}, gates: Features{},
			wantDeleted: []string{"web-4"}},
		{name: "budget used by an unready pod", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(2)), parallel}, gates: defaultGates,
			unready: []string{"web-4", "web-3"}, wantDeleted: []string{"web-3", "web-4"}},
		{name: "parallel: unready old pods go without using the budget", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(2)), parallel},
			gates: defaultGates, unready: []string{"web-0"}, wantDeleted: []string{"web-0", "web-4"}},
		{name: "ordered: an unready pod uses the budget", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(2))},
			gates: defaultGates, unready: []string{"web-0"}, wantDeleted: nil},
		{name: "partition", opts: []setOpt{withMaxUnavailable(intstr.FromInt32(3)), withPartition(3)}, gates: defaultGates,
			wantDeleted: []string{"web-3", "web-4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.gates, newSet(5, tc.opts...))
			f.converge()
			for _, p := range tc.unready {
				f.setPod(p, v1.PodRunning, false)
			}
			f.updateSet(newImage("nginx:2"))
			f.mustSync()
			if got := f.deletedPods(); !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
		})
	}
}

func TestOnDelete(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(2, onDelete))
	f.converge()
	oldRev := f.revisions()[0].Name
	f.updateSet(newImage("nginx:2"))
	f.converge()
	newRev := f.revisions()[1].Name
	if got := f.podRevisions(); !slices.Equal(got, []string{oldRev, oldRev}) {
		t.Fatalf("OnDelete replaced pods: %v", got)
	}
	if err := f.client.CoreV1().Pods("ns").Delete(f.ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.converge()
	if got := f.podRevisions(); !slices.Equal(got, []string{oldRev, newRev}) {
		t.Fatalf("a deleted pod comes back at the update revision: %v", got)
	}
	st := f.set().Status
	if st.CurrentRevision != oldRev || st.UpdateRevision != newRev || st.CurrentReplicas != 1 || st.UpdatedReplicas != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestMinReadySeconds(t *testing.T) {
	f := newFixture(t, defaultGates, newSet(2, withMinReady(10)))
	f.mustSync()
	f.setPod("web-0", v1.PodRunning, true)
	f.mustSync()
	if got := f.podNames(); got != "web-0" {
		t.Fatalf("web-1 created before web-0 is available: %s", got)
	}
	st := f.set().Status
	if st.ReadyReplicas != 1 || st.AvailableReplicas != 0 {
		t.Errorf("status %+v", st)
	}
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("queue holds %d keys at once", n)
	}
	f.clock.Step(10e9)
	f.mustSync()
	if got := f.podNames(); got != "web-0,web-1" {
		t.Fatalf("pods %s after minReadySeconds", got)
	}
	// The status waits for the cache to show web-1.
	if st := f.set().Status; st.AvailableReplicas != 0 {
		t.Errorf("status written before web-1 is in the cache: %+v", st)
	}
	f.mustSync()
	if st := f.set().Status; st.AvailableReplicas != 1 || st.Replicas != 2 {
		t.Errorf("status %+v", st)
	}
}

func TestRecreateStrategy(t *testing.T) {
	recreate := func(s *apps.StatefulSet) {
		s.Spec.UpdateStrategy = apps.StatefulSetUpdateStrategy{Type: apps.RecreateStatefulSetStrategyType}
	}
	t.Run("gate off", func(t *testing.T) {
		f := newFixture(t, defaultGates, newSet(2, recreate))
		if err := f.sync(); err == nil {
			t.Fatal("no error with the gate off")
		}
		events := strings.Join(f.takeEvents(), "\n")
		if !strings.Contains(events, "Warning UnknownStrategy statefulset ns/web uses Recreate strategy but feature gate StatefulSetRecreateStrategy is disabled") {
			t.Errorf("events:\n%s", events)
		}
		if f.podNames() != "" || f.set().Status.ObservedGeneration != 0 {
			t.Error("pods or status written with the gate off")
		}
	})
	t.Run("gate on", func(t *testing.T) {
		gates := defaultGates
		gates.Recreate = true
		f := newFixture(t, gates, newSet(3, recreate))
		f.converge()
		f.updateSet(newImage("nginx:2"))
		f.mustSync()
		if got := f.deletedPods(); !slices.Equal(got, []string{"web-0", "web-1", "web-2"}) {
			t.Fatalf("deleted %v, want every old pod at once", got)
		}
		cond := condition(&f.set().Status, apps.StatefulSetProgressing)
		if cond == nil || cond.Reason != recreateInProgressReason || cond.Status != v1.ConditionTrue {
			t.Errorf("Progressing %+v", cond)
		}
		f.converge()
		newRev := f.revisions()[1].Name
		if got := f.podRevisions(); !slices.Equal(got, []string{newRev, newRev, newRev}) {
			t.Fatalf("pods at %v", got)
		}
		cond = condition(&f.set().Status, apps.StatefulSetProgressing)
		if cond == nil || cond.Reason != recreateCompletedReason || cond.Status != v1.ConditionFalse {
			t.Errorf("Progressing after the update %+v", cond)
		}
	})
}
