package daemonset

import (
	"reflect"
	"slices"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
)

// drain returns the keys on a queue, sorted.
func drain(t *testing.T, q interface {
	Len() int
	Get() (string, bool)
	Done(string)
}) []string {
	t.Helper()
	var out []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestNodeHandlersOnlyQueue(t *testing.T) {
	f := newFixture(t)
	logger, _ := ktesting.NewTestContext(t)
	n := newNode("n")
	heartbeat := n.DeepCopy()
	heartbeat.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	f.c.updateNode(logger, n, heartbeat)
	if f.c.nodeQueue.Len() != 0 {
		t.Error("status-only update queued")
	}
	relabelled := n.DeepCopy()
	relabelled.Labels["x"] = "y"
	f.c.updateNode(logger, n, relabelled)
	f.c.addNode(logger, newNode("m"))
	f.c.deleteNode(logger, newNode("gone"))
	if got := drain(t, f.c.nodeQueue); !reflect.DeepEqual(got, []string{"gone", "m", "n"}) {
		t.Errorf("node queue %v", got)
	}
	if f.c.queue.Len() != 0 {
		t.Error("a DaemonSet was queued by a node handler")
	}
}

func TestSyncNode(t *testing.T) {
	named := func(name string, opts ...dsOpt) *apps.DaemonSet {
		ds := newDS(opts...)
		ds.Name, ds.UID = name, types.UID("uid-"+name)
		return ds
	}
	edge := map[string]string{"role": "edge"}
	wants := named("wants")                                 // fits, no pod: sync
	has := named("has")                                     // fits, pod: nothing to do
	selective := named("selective", withNodeSelector(edge)) // does not fit, no pod: nothing
	evicted := named("evicted", withNodeSelector(edge))     // does not fit, pod: sync
	recount := named("recount", withStatus(apps.DaemonSetStatus{NumberMisscheduled: 1}))
	node := newNode("n")
	f := newFixture(t, wants, has, selective, evicted, recount, node,
		daemonPod(has, "p1", "n"), daemonPod(evicted, "p2", "n"), daemonPod(recount, "p3", "n"))
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.syncNode(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, f.c.queue); !reflect.DeepEqual(got, []string{"ns/evicted", "ns/recount", "ns/wants"}) {
		t.Errorf("queued %v", got)
	}
	// A node that is gone wakes the DaemonSets with pods on it.
	f.stores["Node"].Delete(node)
	if err := f.c.syncNode(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, f.c.queue); !reflect.DeepEqual(got, []string{"ns/evicted", "ns/has", "ns/recount"}) {
		t.Errorf("queued for a gone node %v", got)
	}
}

func TestPodHandlers(t *testing.T) {
	ds := newDS(withMinReady(5))
	f := newFixture(t, []runtime.Object{ds}...)
	logger, _ := ktesting.NewTestContext(t)
	f.c.expectations.ExpectDeletions(logger, "ns/web", []string{"ns/p"})
	p := daemonPod(ds, "p", "n")
	deleting := p.DeepCopy()
	deleting.ResourceVersion = "2"
	terminating(deleting)
	f.c.updatePod(logger, p, deleting)
	if !f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		t.Error("graceful deletion not observed")
	}
	// The terminating pod updated again is not a second deletion.
	again := deleting.DeepCopy()
	again.ResourceVersion = "3"
	f.c.updatePod(logger, deleting, again)
	f.c.deletePod(logger, again)
	if _, del, _ := f.c.expectations.GetExpectations("ns/web"); del != 0 {
		t.Errorf("deletions expected %d", del)
	}
	if got := drain(t, f.c.queue); !reflect.DeepEqual(got, []string{"ns/web"}) {
		t.Errorf("queued %v", got)
	}
	// An orphan matching the selector wakes the DaemonSet; one not
	// matching does not.
	o := daemonPod(ds, "o", "n", orphan)
	f.c.addPod(logger, o)
	stranger := daemonPod(ds, "s", "n", orphan)
	stranger.Labels = map[string]string{"app": "other"}
	f.c.addPod(logger, stranger)
	if got := drain(t, f.c.queue); !reflect.DeepEqual(got, []string{"ns/web"}) {
		t.Errorf("queued %v", got)
	}
}

func TestOwnStatusEchoNotSynced(t *testing.T) {
	ds := newDS()
	f := newFixture(t, ds)
	logger, _ := ktesting.NewTestContext(t)
	echo := ds.DeepCopy()
	echo.ResourceVersion = "11"
	echo.Status.DesiredNumberScheduled = 3
	f.c.written.wrote("ns/web", "11")
	f.c.updateDaemonSet(logger, ds, echo)
	if f.c.queue.Len() != 0 {
		t.Error("the echo of the own status write was queued")
	}
	// Anything else is synced: the same version again (a resync), another
	// one, or a spec change.
	f.c.updateDaemonSet(logger, echo, echo)
	other := echo.DeepCopy()
	other.ResourceVersion = "12"
	f.c.updateDaemonSet(logger, echo, other)
	if got := drain(t, f.c.queue); !reflect.DeepEqual(got, []string{"ns/web"}) {
		t.Errorf("queued %v", got)
	}
	f.c.written.wrote("ns/web", "13")
	spec := other.DeepCopy()
	spec.ResourceVersion, spec.Generation = "13", 2
	f.c.updateDaemonSet(logger, other, spec)
	if f.c.queue.Len() != 1 {
		t.Error("a spec change with the written version was not queued")
	}
}
