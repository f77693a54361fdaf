package daemonset

import (
	"reflect"
	"slices"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
)

// rollingFixture is ds on nodes node-0…node-(n-1), each running one pod
// built by pod(i).
func rollingFixture(t *testing.T, ds *apps.DaemonSet, n int, pod func(i int, node string) runtime.Object) *fixture {
	t.Helper()
	rest := []runtime.Object{currentRevision(t, ds, 2)}
	for i, node := range nodes(n) {
		rest = append(rest, node)
		if p := pod(i, node.(interface{ GetName() string }).GetName()); p != nil {
			rest = append(rest, p)
		}
	}
	return newFixture(t, objs(ds, rest...)...)
}

func TestRollingMaxUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ds          *apps.DaemonSet
		pod         func(ds *apps.DaemonSet, i int, node string) runtime.Object
		wantDeleted []string
	}{
		{"two of four old available pods", newDS(withStrategy("2", "0")),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, []string{"old-node-0", "old-node-1"}},
		{"percentage rounds up: 30% of 4 is 2", newDS(withStrategy("30%", "0")),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, []string{"old-node-0", "old-node-1"}},
		{"unavailable new pod uses the budget", newDS(withStrategy("1", "0")),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				if i == 0 {
					return daemonPod(ds, "new-"+node, node)
				}
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, nil},
		{"unavailable old pods are replaced beyond the budget", newDS(withStrategy("1", "0")),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				if i < 2 {
					return daemonPod(ds, "old-"+node, node, oldRevision)
				}
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, []string{"old-node-0", "old-node-1"}},
		{"minReadySeconds: ready is not available yet", newDS(withStrategy("1", "0"), withMinReady(60)),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				if i == 0 {
					return daemonPod(ds, "new-"+node, node, readyFor(30*time.Second))
				}
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, nil},
		{"a node without pod counts as unavailable", newDS(withStrategy("2", "0")),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				if i == 0 {
					return nil
				}
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, nil}, // manage creates on node-0 first
		{"OnDelete leaves old pods", newDS(onDelete),
			func(ds *apps.DaemonSet, i int, node string) runtime.Object {
				return daemonPod(ds, "old-"+node, node, oldRevision, ready)
			}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := rollingFixture(t, tc.ds, 4, func(i int, node string) runtime.Object { return tc.pod(tc.ds, i, node) })
			if err := f.sync(t); err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(f.pods.Deleted))
			if !reflect.DeepEqual(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
		})
	}
}

func TestRollingMaxSurge(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ds           *apps.DaemonSet
		pods         func(ds *apps.DaemonSet, node string, i int) []runtime.Object
		wantDeleted  []string
		wantCreateOn []string
	}{
		{"surge onto one node", newDS(withStrategy("0", "1")),
			func(ds *apps.DaemonSet, node string, i int) []runtime.Object {
				return []runtime.Object{daemonPod(ds, "old-"+node, node, oldRevision, ready)}
			}, nil, []string{"node-0"}},
		{"percentage rounds up: 50% of 3 is 2", newDS(withStrategy("0", "50%")),
			func(ds *apps.DaemonSet, node string, i int) []runtime.Object {
				return []runtime.Object{daemonPod(ds, "old-"+node, node, oldRevision, ready)}
			}, nil, []string{"node-0", "node-1"}},
		{"a node still surging uses the budget", newDS(withStrategy("0", "1")),
			func(ds *apps.DaemonSet, node string, i int) []runtime.Object {
				if i == 0 {
					// manage would delete the old pod itself; here the new one
					// is not ready yet, so the node is surging.
					return []runtime.Object{daemonPod(ds, "old-"+node, node, oldRevision, ready, createdAt(t0.Add(-2*time.Hour))),
						daemonPod(ds, "new-"+node, node)}
				}
				return []runtime.Object{daemonPod(ds, "old-"+node, node, oldRevision, ready)}
			}, nil, nil},
		{"unavailable old pods get their new pod at once", newDS(withStrategy("0", "1")),
			func(ds *apps.DaemonSet, node string, i int) []runtime.Object {
				return []runtime.Object{daemonPod(ds, "old-"+node, node, oldRevision)}
			}, nil, []string{"node-0", "node-1", "node-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest := []runtime.Object{currentRevision(t, tc.ds, 2)}
			for i, n := range nodes(3) {
				name := n.(interface{ GetName() string }).GetName()
				rest = append(append(rest, n), tc.pods(tc.ds, name, i)...)
			}
			f := newFixture(t, objs(tc.ds, rest...)...)
			if err := f.sync(t); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(f.pods.Deleted)); !reflect.DeepEqual(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
			if got := slices.Sorted(slices.Values(f.createdOn(t))); !reflect.DeepEqual(got, tc.wantCreateOn) {
				t.Errorf("created on %v, want %v", got, tc.wantCreateOn)
			}
		})
	}
}

// TestSurgeManage: while surging, manage keeps two pods on a node only
// while the new one is not available and the old one ready.
func TestSurgeManage(t *testing.T) {
	ds := newDS(withStrategy("0", "1"))
	older := createdAt(t0.Add(-2 * time.Hour))
	for _, tc := range []struct {
		name string
		pods []runtime.Object
		want []string
	}{
		{"new available: old goes", []runtime.Object{daemonPod(ds, "old", "node-0", oldRevision, ready, older), daemonPod(ds, "new", "node-0", ready)}, []string{"old"}},
		{"new not ready, old ready: both stay", []runtime.Object{daemonPod(ds, "old", "node-0", oldRevision, ready, older), daemonPod(ds, "new", "node-0")}, nil},
		{"old not ready: old goes", []runtime.Object{daemonPod(ds, "old", "node-0", oldRevision, older), daemonPod(ds, "new", "node-0")}, []string{"old"}},
		{"two new: the younger goes", []runtime.Object{daemonPod(ds, "new1", "node-0", older), daemonPod(ds, "new2", "node-0")}, []string{"new2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, objs(ds, append(tc.pods, newNode("node-0"), currentRevision(t, ds, 2))...)...)
			if err := f.sync(t); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(f.pods.Deleted)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("deleted %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRollingSeesManagesDeletions: when the informer has already seen
// manage's deletions (expectations satisfied), the rolling update reads
// the pods again rather than deleting the same pod a second time.
func TestRollingSeesManagesDeletions(t *testing.T) {
	ds := newDS(withStrategy("0", "1"))
	older := createdAt(t0.Add(-2 * time.Hour))
	oldPod := daemonPod(ds, "old-node-0", "node-0", oldRevision, ready, older)
	rest := []runtime.Object{currentRevision(t, ds, 2), oldPod, daemonPod(ds, "new-node-0", "node-0", ready)}
	for i, n := range nodes(3) {
		rest = append(rest, n)
		if i > 0 {
			name := n.(interface{ GetName() string }).GetName()
			rest = append(rest, daemonPod(ds, "old-"+name, name, oldRevision, ready))
		}
	}
	f := newFixture(t, objs(ds, rest...)...)
	logger, _ := ktesting.NewTestContext(t)
	f.pods.DeleteErr = func(name string) error {
		// The watch delivers the graceful deletion before the call returns.
		gone := oldPod.DeepCopy()
		terminating(gone)
		gone.ResourceVersion = "2"
		if err := f.stores["Pod"].Update(gone); err != nil {
			t.Error(err)
		}
		f.c.updatePod(logger, oldPod, gone)
		return nil
	}
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.pods.Deleted, []string{"old-node-0"}) {
		t.Errorf("deleted %v, want old-node-0 once", f.pods.Deleted)
	}
	if got := f.createdOn(t); !reflect.DeepEqual(got, []string{"node-1"}) {
		t.Errorf("created on %v, want the next surge on node-1", got)
	}
}
