package deployment

import (
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"

	"github.com/kcm-dev/kcm/internal/controller"
)

// gatheringFixture is a rollout of 10 replicas (maxSurge 3, maxUnavailable
// 2) midway: the new ReplicaSet at newReplicas with newReady available, the
// old one at oldReplicas, all available; steps are gathered for 1s.
func gatheringFixture(t *testing.T, newReplicas, newReady, oldReplicas int32) *fixture {
	d := deployment(10, surge("3"), unavailable("2"), image("img:2"), annotated(RevisionAnnotation, "2"))
	name := replicaSetName("web", podTemplateHash(d))
	newRS := replicaSet(d, name, "img:2", newReplicas, newer, rev(2), sized(10, 13), running(newReady))
	oldRS := replicaSet(d, "web-old", "img:1", oldReplicas, old, rev(1), sized(10, 13), running(oldReplicas))
	f := newFixture(t, d, newRS, oldRS)
	f.c.steps = controller.NewDeadlines(time.Second, f.clock)
	return f
}

func TestSyncGathersPartialScaleDowns(t *testing.T) {
	// 5 new + 8 old is the most maxSurge allows: no scale-up.
	f := gatheringFixture(t, 5, 1, 8)

	// One new replica available: one old one may go, but not at once.
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range describe(actions) {
		if strings.HasPrefix(a, "update replicasets ") {
			t.Fatalf("a partial scale-down was taken at once: %v", describe(actions))
		}
	}
	if f.c.queue.Len() != 0 {
		t.Fatal("requeued before the gathering period ended")
	}
	f.clock.Step(time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for f.c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not requeued when the gathering period ended")
		}
		time.Sleep(time.Millisecond)
	}
	actions, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	rs := written[*apps.ReplicaSet](t, actions, "replicasets", "", "web-old")
	if *rs.Spec.Replicas != 7 {
		t.Fatalf("after the period: old replica set scaled to %d, want 7", *rs.Spec.Replicas)
	}
}

func TestSyncTakesTheLastScaleDownAtOnce(t *testing.T) {
	f := gatheringFixture(t, 10, 10, 3)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	rs := written[*apps.ReplicaSet](t, actions, "replicasets", "", "web-old")
	if *rs.Spec.Replicas != 0 {
		t.Fatalf("old replica set scaled to %d, want 0 at once", *rs.Spec.Replicas)
	}
}

func TestSyncHoldingAStepDefersCounterOnlyStatus(t *testing.T) {
	f := gatheringFixture(t, 5, 1, 8)
	actions, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	// The first sync records the conditions: not counters only, written.
	stored := written[*apps.Deployment](t, actions, "deployments", "status", "web")

	// A second new replica becomes available within the hold: the status
	// changes only in counters, and waits for the sync that takes the step.
	d := stored.DeepCopy()
	name := replicaSetName("web", podTemplateHash(d))
	newRS := replicaSet(d, name, "img:2", 5, newer, rev(2), sized(10, 13), running(2))
	oldRS := replicaSet(d, "web-old", "img:1", 8, old, rev(1), sized(10, 13), running(8))
	g := newFixture(t, d, newRS, oldRS)
	g.c.steps = f.c.steps
	actions, err = g.sync()
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(actions); len(got) != 0 {
		t.Fatalf("writes while a step is held: %v", got)
	}
}
