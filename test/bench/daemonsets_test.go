package bench

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestDaemonSetDone(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: appsv1.DaemonSetStatus{
		ObservedGeneration: 2, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3,
	}}
	if !DaemonSetDone(ds, 2, 3) {
		t.Error("done DaemonSet not done")
	}
	if DaemonSetDone(ds, 3, 3) || DaemonSetDone(ds, 2, 4) {
		t.Error("older generation or fewer nodes counted done")
	}
	ds.Status.UpdatedNumberScheduled = 2
	if DaemonSetDone(ds, 2, 3) {
		t.Error("rollout in progress counted done")
	}
}

func TestPodLatency(t *testing.T) {
	l := newPodLatency(2)
	l.nodeCreating("n1")
	pinned := func(uid, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}, Spec: corev1.PodSpec{Affinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}},
			}},
		}}}
	}
	l.podSeen(pinned("a", "n1"))
	l.podSeen(pinned("a", "n1")) // the same pod again
	l.podSeen(pinned("x", "old-node"))
	if len(l.done) != 0 {
		t.Fatal("done after one of two pods")
	}
	l.podSeen(pinned("b", "n1"))
	env := &Env{Logf: t.Logf}
	l.record(env, 1)
	f := env.takeFigures()
	if f["nodes measured"] != 1 || f["node-to-pods max s"] < 0 || f["node-to-pods p50 s"] != f["node-to-pods max s"] {
		t.Errorf("figures %v", f)
	}
}
