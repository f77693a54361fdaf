package disruption

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func withSelector(name string, sel *metav1.LabelSelector) *policy.PodDisruptionBudget {
	p := pdbMin(name, intstr.FromInt32(1))
	p.Spec.Selector = sel
	return p
}

func expr(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
}

// The index finds exactly the budgets whose selector matches, as a
// selector match against every budget of the namespace would.
func TestBudgetsForPod(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	budgets := []*policy.PodDisruptionBudget{
		withSelector("labels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}),
		withSelector("in", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", metav1.LabelSelectorOpIn, "web", "db")}}),
		withSelector("exists", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("tier", metav1.LabelSelectorOpExists)}}),
		withSelector("notin", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", metav1.LabelSelectorOpNotIn, "db")}}),
		withSelector("empty", &metav1.LabelSelector{}),
		withSelector("nil", nil),
		withSelector("invalid", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", "illegal", "web")}}),
	}
	other := withSelector("other-ns", &metav1.LabelSelector{})
	other.Namespace = "elsewhere"
	if err := indexer.AddIndexers(cache.Indexers{selectorIndex: func(obj any) ([]string, error) {
		p := obj.(*policy.PodDisruptionBudget)
		return selectorKeys(p.Namespace, p.Spec.Selector), nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(budgets, other) {
		if err := indexer.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		labels map[string]string
		want   []string
	}{
		{map[string]string{"app": "web", "tier": "front"}, []string{"empty", "exists", "in", "labels", "notin"}},
		{map[string]string{"app": "db"}, []string{"empty", "in"}},
		{map[string]string{"tier": "back"}, []string{"empty", "exists", "notin"}},
		{nil, []string{"empty", "notin"}},
	}
	for _, tc := range cases {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: tc.labels}}
		got, err := budgetsForPod(indexer, p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("pod %v: budgets %v, want %v", tc.labels, names, tc.want)
		}
	}
}

// Pod events queue every budget selecting the pod, before and after a
// change of labels; a pod selected by two gets upstream's Event.
func TestPodEventsQueueBudgets(t *testing.T) {
	f := newFixture(t)
	a := withSelector("a", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	b := withSelector("b", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	c := withSelector("c", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}})
	for _, p := range []*policy.PodDisruptionBudget{a, b, c} {
		f.add(p)
	}
	logger := klog.FromContext(f.ctx)
	p := pod("p")
	f.c.podChanged(logger, nil, p)
	if got := drain(f); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Errorf("add queued %v", got)
	}
	if ev := f.events(); len(ev) != 1 || ev[0] != `Warning MultiplePodDisruptionBudgets Pod "ns"/"p" matches multiple PodDisruptionBudgets.  Chose "a" arbitrarily.` {
		t.Errorf("events %q", ev)
	}
	moved := p.DeepCopy()
	moved.Labels = map[string]string{"app": "db"}
	f.c.podChanged(logger, p, moved)
	if got := drain(f); !slices.Equal(got, []string{"ns/a", "ns/b", "ns/c"}) {
		t.Errorf("relabel queued %v", got)
	}
	f.c.podDeleted(logger, cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: moved})
	if got := drain(f); !slices.Equal(got, []string{"ns/c"}) {
		t.Errorf("delete queued %v", got)
	}
}

func drain(f *fixture) []string {
	var out []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		f.c.queue.Done(k)
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
