package statefulset

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func (f *fixture) wroteStatus() bool {
	return slices.Contains(f.writes(), "update statefulsets/status web")
}

func TestStatusHolds(t *testing.T) {
	f := newFixtureSpaced(t, defaultGates, time.Second, newSet(3, parallel))
	f.mustSync()
	if f.podNames() != "web-0,web-1,web-2" || f.wroteStatus() {
		t.Fatalf("first sync: pods %s, status written %v: the status waits for the created pods", f.podNames(), f.wroteStatus())
	}
	f.mustSync()
	if st := f.set().Status; !f.wroteStatus() || st.ObservedGeneration != 1 || st.Replicas != 3 {
		t.Fatalf("second sync: status %+v", st)
	}
	// Progress within the period: held.
	f.setPod("web-0", v1.PodRunning, true)
	f.mustSync()
	if f.wroteStatus() {
		t.Fatal("progress-only status written within the period")
	}
	f.clock.Step(time.Second)
	f.mustSync()
	if st := f.set().Status; !f.wroteStatus() || st.ReadyReplicas != 1 {
		t.Fatalf("after the period: status %+v", st)
	}
	// The goal is written at once.
	f.setPod("web-1", v1.PodRunning, true)
	f.setPod("web-2", v1.PodRunning, true)
	f.mustSync()
	if st := f.set().Status; !f.wroteStatus() || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 {
		t.Fatalf("goal: status %+v", st)
	}
}

func TestCreationsPending(t *testing.T) {
	var cr creations
	now := time.Now()
	pod := func(name, uid string) *v1.Pod {
		p := &v1.Pod{}
		p.Name, p.UID = name, uidOf(uid)
		return p
	}
	cr.add("ns/web", pod("web-0", "a"), now)
	cr.add("ns/web", pod("web-1", "b"), now.Add(time.Second))
	if d := cr.pending("ns/web", nil, now); d != creationWait+time.Second {
		t.Errorf("pending = %v", d)
	}
	// An old pod of the same name is not the one created.
	if d := cr.pending("ns/web", []*v1.Pod{pod("web-0", "old"), pod("web-1", "b")}, now); d != creationWait {
		t.Errorf("pending = %v, want web-0's wait", d)
	}
	if d := cr.pending("ns/web", nil, now.Add(creationWait)); d != 0 {
		t.Errorf("pending after the wait = %v", d)
	}
}

func uidOf(s string) types.UID { return types.UID(s) }
