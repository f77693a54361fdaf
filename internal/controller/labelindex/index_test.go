package labelindex

import (
	"fmt"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	sort.Strings(out)
	return out
}

func TestSelectMatchesAFullScan(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
	if err := Add(informer); err != nil {
		t.Fatal(err)
	}
	if err := Add(informer); err != nil { // a second controller: no error
		t.Fatal(err)
	}
	if err := indexer.AddIndexers(informer.GetIndexer().GetIndexers()); err != nil {
		t.Fatal(err)
	}
	podLabels := []map[string]string{
		nil,
		{"app": "a"},
		{"app": "a", "pod-template-hash": "h1"},
		{"app": "a", "pod-template-hash": "h2"},
		{"app": "b", "pod-template-hash": "h1"},
		{"tier": "x"},
		{"app": "a", "tier": "x"},
	}
	for _, ns := range []string{"n1", "n2"} {
		for i, l := range podLabels {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("p", i), Labels: l}}
			if err := indexer.Add(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A relabelled pod leaves its old buckets.
	if err := indexer.Update(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n1", Name: "p1", Labels: map[string]string{"app": "c"}}}); err != nil {
		t.Fatal(err)
	}
	selectors := []string{
		"", "app=a", "app==a", "app=a,pod-template-hash=h1", "app in (a,b)", "app in (a,b),tier",
		"app!=a", "tier", "!app", "app=a,tier notin (x)", "app=zzz", "app=c", "app notin (a)",
	}
	for _, ns := range []string{"n1", "n2", ""} {
		for _, s := range selectors {
			sel, err := labels.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			var want []*v1.Pod
			if err := cache.ListAllByNamespace(indexer, ns, sel, func(o any) { want = append(want, o.(*v1.Pod)) }); err != nil {
				t.Fatal(err)
			}
			got, err := Select[*v1.Pod](indexer, ns, sel)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprint(names(got)), fmt.Sprint(names(want)); g != w {
				t.Errorf("namespace %q selector %q: got %s, want %s", ns, s, g, w)
			}
		}
	}
	if got, _ := Select[*v1.Pod](indexer, "n1", labels.Nothing()); len(got) != 0 {
		t.Errorf("labels.Nothing() selected %d pods", len(got))
	}
}
