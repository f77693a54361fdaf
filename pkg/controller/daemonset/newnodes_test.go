package daemonset

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TestNewNodesTakenInTurns: a settled DaemonSet covers nodes that joined
// after its pods were placed a turn at a time (newNodeBatch at the
// default QPS), oldest first, while other DaemonSets wait, and such a
// turn writes no status; otherwise it covers every node in one sync and
// writes its status.
func TestNewNodesTakenInTurns(t *testing.T) {
	const newNodes = newNodeBatch + 10
	node := func(name string, created time.Time) *v1.Node {
		n := newNode(name)
		n.CreationTimestamp = metav1.NewTime(created)
		return n
	}
	// Joined ten minutes ago, in reverse name order: age decides.
	var joined []runtime.Object
	var oldestFirst []string
	for i := range newNodes {
		name := fmt.Sprintf("new-%02d", newNodes-1-i)
		joined = append(joined, node(name, t0.Add(-10*time.Minute+time.Duration(i)*time.Second)))
		oldestFirst = append(oldestFirst, name)
	}
	for _, tc := range []struct {
		name       string
		others     bool      // another DaemonSet waits in the queue
		podCreated time.Time // of the pods on the old nodes
		podOpts    []podOpt  // of the pod on old-1
		noPods     bool      // a new DaemonSet
		noTurns    bool      // --kcm-upstream-write-timing
		want       []string  // nodes created on, in order
		wantN      int       // or only their count
	}{
		{name: "others wait", others: true, podCreated: t0.Add(-time.Hour), want: oldestFirst[:newNodeBatch]},
		{name: "alone in the queue", podCreated: t0.Add(-time.Hour), want: oldestFirst},
		{name: "rolling out", others: true, podCreated: t0.Add(-time.Hour), podOpts: []podOpt{oldRevision}, want: oldestFirst},
		{name: "nodes older than the pods", others: true, podCreated: t0.Add(-time.Minute), want: oldestFirst},
		{name: "new DaemonSet", others: true, noPods: true, wantN: newNodes + 2},
		{name: "upstream write timing", others: true, noTurns: true, podCreated: t0.Add(-time.Hour), want: oldestFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := newDS()
			objects := append(objs(ds, currentRevision(t, ds, 1),
				node("old-0", t0.Add(-2*time.Hour)), node("old-1", t0.Add(-2*time.Hour))), joined...)
			if !tc.noPods {
				objects = append(objects,
					daemonPod(ds, "p0", "old-0", createdAt(tc.podCreated)),
					daemonPod(ds, "p1", "old-1", append([]podOpt{createdAt(tc.podCreated)}, tc.podOpts...)...))
			}
			f := newFixture(t, objects...)
			if tc.noTurns {
				f.c.turn = turnSize(0, BurstReplicas, true)
			}
			if tc.others {
				f.c.queue.Add("ns/other")
			}
			if err := f.sync(t); err != nil {
				t.Fatal(err)
			}
			// A slow-start batch creates concurrently: compare sets.
			got := slices.Sorted(slices.Values(f.createdOn(t)))
			if tc.want != nil && !reflect.DeepEqual(got, slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("created on %v, want %v", got, tc.want)
			}
			if tc.want == nil && len(got) != tc.wantN {
				t.Errorf("created on %d nodes, want %d", len(got), tc.wantN)
			}
			yielded := f.c.turn > 0 && len(got) == f.c.turn
			if n := len(f.statusUpdates()); yielded != (n == 0) {
				t.Errorf("%d status writes after creating on %d nodes", n, len(got))
			}
		})
	}
}

// TestTurnCreatesInOneRound: a turn's creates go in one round, not in
// slow-start batches, and each failure is reported.
func TestTurnCreatesInOneRound(t *testing.T) {
	ds := newDS()
	objects := objs(ds, currentRevision(t, ds, 1), newNode("old"))
	objects = append(objects, daemonPod(ds, "p0", "old", createdAt(t0.Add(-time.Hour))))
	for i := range newNodeBatch + 5 {
		n := newNode(fmt.Sprintf("new-%02d", i))
		n.CreationTimestamp = metav1.NewTime(t0.Add(-time.Minute))
		objects = append(objects, n)
	}
	f := newFixture(t, objects...)
	f.c.queue.Add("ns/other")
	const accepted = 3
	f.pods.CreateLimit = accepted
	err := f.sync(t)
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		t.Fatalf("sync: %v, want the failed creates", err)
	}
	// Slow start would have stopped after its third batch (1+2+4 calls).
	if got, want := len(agg.Errors()), f.c.turn-accepted; got != want {
		t.Errorf("%d creates failed, want %d: every create of the turn tried", got, want)
	}
	if got := len(f.createdOn(t)); got != accepted {
		t.Errorf("%d pods created, want %d", got, accepted)
	}
}

// TestTurnSize: a turn is 20 new nodes up to 200 QPS, a tenth of a second
// of the limiter above, and never more than one sync may create.
func TestTurnSize(t *testing.T) {
	for _, tc := range []struct {
		qps   float32
		burst int
		want  int
	}{
		{qps: 0, burst: BurstReplicas, want: newNodeBatch},
		{qps: -1, burst: BurstReplicas, want: newNodeBatch}, // no limiter
		{qps: 20, burst: BurstReplicas, want: newNodeBatch},
		{qps: 200, burst: BurstReplicas, want: newNodeBatch},
		{qps: 500, burst: BurstReplicas, want: 50},
		{qps: 1e5, burst: BurstReplicas, want: BurstReplicas},
		{qps: 500, burst: 10, want: 10},
	} {
		if got := turnSize(tc.qps, tc.burst, false); got != tc.want {
			t.Errorf("turnSize(%v, %d) = %d, want %d", tc.qps, tc.burst, got, tc.want)
		}
	}
}
