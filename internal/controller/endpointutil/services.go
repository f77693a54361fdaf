package endpointutil

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// ServiceSelectorIndex is the Service informer index that maps a pod's
// labels to the Services that may select it. A Service with a selector is
// indexed once, under "<namespace>/<key>=<value>" for the smallest key of
// its selector; one with an empty selector (which selects every pod) under
// "<namespace>/"; one without a selector (which selects none) not at all.
// A pod can only be selected by Services indexed under one of its own
// labels or under the empty key, so a lookup costs one index read per pod
// label instead of a selector match per Service of the namespace.
const ServiceSelectorIndex = "endpointutil.serviceSelector"

// AddServiceSelectorIndex adds ServiceSelectorIndex to the Service
// informer, unless another controller did.
func AddServiceSelectorIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[ServiceSelectorIndex]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{ServiceSelectorIndex: func(obj any) ([]string, error) {
		svc, ok := obj.(*v1.Service)
		if !ok || svc.Spec.Selector == nil {
			return nil, nil
		}
		return []string{selectorIndexKey(svc.Namespace, svc.Spec.Selector)}, nil
	}})
	if err != nil {
		return fmt.Errorf("adding the %s index: %w", ServiceSelectorIndex, err)
	}
	return nil
}

func selectorIndexKey(namespace string, selector map[string]string) string {
	if len(selector) == 0 {
		return namespace + "/"
	}
	first := ""
	for k := range selector {
		if first == "" || k < first {
			first = k
		}
	}
	return namespace + "/" + first + "=" + selector[first]
}

// ServicesForPod returns the keys of the Services in namespace whose
// selector matches podLabels, from an indexer with ServiceSelectorIndex.
func ServicesForPod(indexer cache.Indexer, namespace string, podLabels map[string]string) (sets.Set[string], error) {
	out := sets.New[string]()
	add := func(key string) error {
		objs, err := indexer.ByIndex(ServiceSelectorIndex, key)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			svc := obj.(*v1.Service)
			if labels.ValidatedSetSelector(svc.Spec.Selector).Matches(labels.Set(podLabels)) {
				out.Insert(svc.Namespace + "/" + svc.Name)
			}
		}
		return nil
	}
	if err := add(namespace + "/"); err != nil {
		return nil, err
	}
	for k, v := range podLabels {
		if err := add(namespace + "/" + k + "=" + v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ServicesForPodChange returns the keys of the Services whose endpoints a
// pod event may change, as upstream decides: for an added or deleted pod
// (oldPod or newPod nil) the Services selecting it; for an update, none
// unless the endpoint or the selecting Services may have changed; when the
// labels changed, the Services that selected it before or after if the
// endpoint changed too, else only those that gained or lost it. A resync
// (same resourceVersion) concerns none.
func ServicesForPodChange(indexer cache.Indexer, oldPod, newPod *v1.Pod) (sets.Set[string], error) {
	switch {
	case oldPod == nil && newPod == nil:
		return nil, nil
	case oldPod == nil:
		return ServicesForPod(indexer, newPod.Namespace, newPod.Labels)
	case newPod == nil:
		return ServicesForPod(indexer, oldPod.Namespace, oldPod.Labels)
	case oldPod.ResourceVersion == newPod.ResourceVersion:
		return nil, nil
	}
	changed, relabelled := podChange(oldPod, newPod)
	if !changed && !relabelled {
		return nil, nil
	}
	now, err := ServicesForPod(indexer, newPod.Namespace, newPod.Labels)
	if err != nil || !relabelled {
		return now, err
	}
	before, err := ServicesForPod(indexer, newPod.Namespace, oldPod.Labels)
	if err != nil {
		return nil, err
	}
	if changed {
		return now.Union(before), nil
	}
	return now.SymmetricDifference(before), nil
}
