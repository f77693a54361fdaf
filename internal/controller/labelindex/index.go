package labelindex

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"
)

// Index is the informer index name: one value per label of an object,
// "<namespace>/<key>=<value>".
const Index = "namespaceLabel"

func indexKey(namespace, key, value string) string {
	return namespace + "/" + key + "=" + value
}

// Add adds Index to informer, unless another controller did.
func Add(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[Index]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{Index: func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil
		}
		ls := m.GetLabels()
		if len(ls) == 0 {
			return nil, nil
		}
		keys := make([]string, 0, len(ls))
		for k, v := range ls {
			keys = append(keys, indexKey(m.GetNamespace(), k, v))
		}
		return keys, nil
	}})
	if err != nil {
		return fmt.Errorf("adding the %s index: %w", Index, err)
	}
	return nil
}

// Select returns the cached objects of type T in namespace ("" for all)
// that selector matches, the same set as a lister's List(selector), from an
// indexer that has Index. A selector with no equality requirement (only
// Exists, NotIn…) falls back to matching every object of the namespace. The
// objects are the cache's: do not modify them.
func Select[T any](indexer cache.Indexer, namespace string, selector labels.Selector) ([]T, error) {
	var out []T
	add := func(obj any) {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	}
	reqs, selectable := selector.Requirements()
	if !selectable {
		return nil, nil
	}
	if namespace == "" {
		reqs = nil // every namespace: the index is per namespace
	}
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		// An object has one value per key: the sets of the values are
		// disjoint, so no object is returned twice.
		for _, v := range r.ValuesUnsorted() {
			objs, err := indexer.ByIndex(Index, indexKey(namespace, r.Key(), v))
			if err != nil {
				return nil, err
			}
			for _, obj := range objs {
				if m, err := meta.Accessor(obj); err == nil && selector.Matches(labels.Set(m.GetLabels())) {
					add(obj)
				}
			}
		}
		return out, nil
	}
	err := cache.ListAllByNamespace(indexer, namespace, selector, add)
	return out, err
}
