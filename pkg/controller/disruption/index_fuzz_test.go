package disruption

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// fuzzBytes hands out fuzz bytes, zeros once they run out.
type fuzzBytes []byte

func (r *fuzzBytes) next() int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b)
}

// pick returns one of choices: small alphabets of valid label keys and
// values, so that fuzzed pods and selectors often meet.
func (r *fuzzBytes) pick(choices ...string) string { return choices[r.next()%len(choices)] }
func (r *fuzzBytes) key() string                   { return r.pick("app", "tier", "example.com/role", "a") }
func (r *fuzzBytes) value() string                 { return r.pick("", "web", "db", "a") }

// selector reads a budget's selector: nil, or match labels and
// expressions of every operator, some invalid (an unknown operator, In
// without values, Exists with values).
func (r *fuzzBytes) selector() *metav1.LabelSelector {
	if r.next()%8 == 0 {
		return nil
	}
	sel := &metav1.LabelSelector{}
	for n := r.next() % 3; n > 0; n-- {
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]string{}
		}
		sel.MatchLabels[r.key()] = r.value()
	}
	for n := r.next() % 3; n > 0; n-- {
		req := metav1.LabelSelectorRequirement{
			Key:      r.key(),
			Operator: metav1.LabelSelectorOperator(r.pick("In", "NotIn", "Exists", "DoesNotExist", "In", "Exists", "illegal")),
		}
		for v := r.next() % 3; v > 0; v-- {
			req.Values = append(req.Values, r.value())
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

// FuzzBudgetsForPod checks the budget selector index: after any sequence
// of budget adds, updates and deletes, the budgets found for a pod are
// exactly, sorted by name, those of its namespace whose selector
// metav1.LabelSelectorAsSelector converts and which then matches the
// pod's labels (upstream's lister: an empty selector matches every pod; a
// nil or invalid one none).
func FuzzBudgetsForPod(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 2, 1, 1, 1, 3, 0, 2, 0, 1, 1})
	f.Add([]byte{1, 2, 1, 0, 1, 2, 0, 1, 3, 1, 0, 4, 2, 2, 2, 2, 2, 2})
	f.Add([]byte{5, 6, 0, 0, 2, 6, 1, 1, 1, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Add([]byte{255, 254, 253, 252, 251, 250, 249, 248, 247, 246, 245, 244})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzBytes(data)
		informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &policy.PodDisruptionBudget{}, 0, cache.Indexers{})
		if err := addSelectorIndex(informer); err != nil {
			t.Fatal(err)
		}
		indexer := informer.GetIndexer()
		for i := 0; len(r) > 0 && i < 16; i++ {
			op := r.next()
			pdb := &policy.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{
				Namespace: r.pick("ns", "other"),
				Name:      fmt.Sprint("b", r.next()%6),
			}}
			pdb.Spec.Selector = r.selector()
			var err error
			if op%8 == 7 {
				err = indexer.Delete(pdb)
			} else {
				err = indexer.Update(pdb) // adds a budget it does not hold
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
		for n := r.next() % 4; n > 0; n-- {
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			pod.Labels[r.key()] = r.value()
		}

		got, err := budgetsForPod(indexer, pod)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		var want []string
		for _, obj := range indexer.List() {
			pdb := obj.(*policy.PodDisruptionBudget)
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if pdb.Namespace == pod.Namespace && err == nil && sel.Matches(labels.Set(pod.Labels)) {
				want = append(want, pdb.Name)
			}
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("pod labels %v: budgetsForPod = %v, a full scan finds %v", pod.Labels, names, want)
		}
	})
}
