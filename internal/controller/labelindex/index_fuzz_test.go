package labelindex

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Small alphabets of valid label keys and values, so that fuzzed pods and
// selectors often meet.
var (
	fuzzKeys   = []string{"app", "tier", "example.com/role", "a", "pod-template-hash"}
	fuzzValues = []string{"", "web", "db", "a", "h1"}
)

// byteReader hands out fuzz bytes, zeros once they run out.
type byteReader []byte

func (r *byteReader) next() int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b)
}

func (r *byteReader) key() string   { return fuzzKeys[r.next()%len(fuzzKeys)] }
func (r *byteReader) value() string { return fuzzValues[r.next()%len(fuzzValues)] }

// labelSelector reads a metav1.LabelSelector: match labels and
// expressions of every operator, some of them invalid (In without
// values), which LabelSelectorAsSelector rejects.
func (r *byteReader) labelSelector() *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	for n := r.next() % 3; n > 0; n-- {
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]string{}
		}
		sel.MatchLabels[r.key()] = r.value()
	}
	ops := []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn,
		metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist}
	for n := r.next() % 3; n > 0; n-- {
		req := metav1.LabelSelectorRequirement{Key: r.key(), Operator: ops[r.next()%len(ops)]}
		if req.Operator == metav1.LabelSelectorOpIn || req.Operator == metav1.LabelSelectorOpNotIn {
			for v := r.next() % 3; v > 0; v-- {
				req.Values = append(req.Values, r.value())
			}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

// FuzzSelect checks that Select finds, from the label index, exactly the
// pods a full scan of the namespace (or of all) finds with the selector's
// Matches, each once, for selectors parsed from any string and converted
// from any metav1.LabelSelector.
func FuzzSelect(f *testing.F) {
	f.Add([]byte{3, 1, 0, 1, 2, 0, 2, 1, 1, 2, 0, 1, 0, 0}, "app=web")
	f.Add([]byte{5, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1}, "app in (web,db),tier")
	f.Add([]byte{8, 2, 2, 3, 4, 1, 2, 0, 4}, "!app,tier notin (a)")
	f.Add([]byte{}, "")
	f.Add([]byte{1, 0, 0}, "app==")
	f.Add([]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, "app!=web,app=web")
	f.Add([]byte{4, 3, 2, 1, 0}, "example.com/role in (a,h1,web),pod-template-hash")
	f.Add([]byte{2}, "x in (")
	f.Fuzz(func(t *testing.T, data []byte, selector string) {
		r := byteReader(data)
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
		if err := Add(informer); err != nil {
			t.Fatal(err)
		}
		if err := indexer.AddIndexers(informer.GetIndexer().GetIndexers()); err != nil {
			t.Fatal(err)
		}
		namespaces := []string{"n1", "n2"}
		for i := r.next() % 12; i > 0; i-- {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[r.next()%2], Name: fmt.Sprint("p", r.next()%8)}}
			for n := r.next() % 4; n > 0; n-- {
				if pod.Labels == nil {
					pod.Labels = map[string]string{}
				}
				pod.Labels[r.key()] = r.value()
			}
			if err := indexer.Update(pod); err != nil { // adds a pod it does not hold
				t.Fatal(err)
			}
		}

		var selectors []labels.Selector
		if sel, err := labels.Parse(selector); err == nil {
			selectors = append(selectors, sel)
		}
		ls := r.labelSelector()
		if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil {
			selectors = append(selectors, sel)
		}
		selectors = append(selectors, labels.SelectorFromSet(ls.MatchLabels), labels.Nothing(), labels.Everything())

		for _, sel := range selectors {
			for _, ns := range []string{"n1", "n2", ""} {
				got, err := Select[*v1.Pod](indexer, ns, sel)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, obj := range indexer.List() {
					pod := obj.(*v1.Pod)
					if (ns == "" || pod.Namespace == ns) && sel.Matches(labels.Set(pod.Labels)) {
						want = append(want, pod.Namespace+"/"+pod.Name)
					}
				}
				var names []string
				for _, p := range got {
					names = append(names, p.Namespace+"/"+p.Name)
				}
				slices.Sort(names)
				slices.Sort(want)
				if !slices.Equal(names, want) {
					t.Fatalf("namespace %q, selector %q: Select = %v, a full scan finds %v", ns, sel, names, want)
				}
			}
		}
	})
}
