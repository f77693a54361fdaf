package daemonset

import (
	"fmt"
	"testing"

	apps "k8s.io/api/apps/v1"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// BenchmarkSyncSteady is a sync of a DaemonSet with nothing to do on 600
// nodes: the cost of every sync a pod or status event causes.
func BenchmarkSyncSteady(b *testing.B) {
	ds := newDS(withStatus(apps.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 600, CurrentNumberScheduled: 600,
		NumberReady: 600, NumberAvailable: 600, UpdatedNumberScheduled: 600}))
	rest := []runtime.Object{currentRevision(&testing.T{}, ds, 1)}
	for i := range 600 {
		node := fmt.Sprintf("node-%d", i)
		rest = append(rest, newNode(node), daemonPod(ds, "p-"+node, node, ready))
	}
	t := &testing.T{}
	f := newFixture(t, objs(ds, rest...)...)
	_, ctx := ktesting.NewTestContext(t)
	ctx = klog.NewContext(ctx, klog.Background().V(1))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := f.c.sync(ctx, "ns/web"); err != nil {
			b.Fatal(err)
		}
	}
}
