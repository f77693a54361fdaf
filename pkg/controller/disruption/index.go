package disruption

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// selectorIndex is the budget informer index that maps a pod's labels to
// the budgets that may select it, so that a pod event costs one index read
// per label of the pod instead of a selector match per budget of the
// namespace (upstream's lister). A budget is indexed under one
// requirement every pod it selects must meet:
//
//   - "<ns>/<key>=<value>" for the smallest key of matchLabels;
//   - else, for the first In expression, "<ns>/<key>=<value>" per value;
//   - else, for the first Exists expression, "<ns>/<key>";
//   - else (an empty selector, or only NotIn and DoesNotExist) "<ns>/".
//
// A nil or invalid selector selects nothing and is not indexed.
const selectorIndex = "disruption.podSelector"

func addSelectorIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[selectorIndex]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{selectorIndex: func(obj any) ([]string, error) {
		pdb, ok := obj.(*policy.PodDisruptionBudget)
		if !ok {
			return nil, nil
		}
		return selectorKeys(pdb.Namespace, pdb.Spec.Selector), nil
	}})
	if err != nil {
		return fmt.Errorf("adding the %s index: %w", selectorIndex, err)
	}
	return nil
}

func selectorKeys(ns string, sel *metav1.LabelSelector) []string {
	if sel == nil {
		return nil
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil
	}
	if len(sel.MatchLabels) > 0 {
		keys := make([]string, 0, len(sel.MatchLabels))
		for k := range sel.MatchLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return []string{ns + "/" + keys[0] + "=" + sel.MatchLabels[keys[0]]}
	}
	for _, r := range sel.MatchExpressions {
		if r.Operator == metav1.LabelSelectorOpIn {
			out := make([]string, 0, len(r.Values))
			for _, v := range r.Values {
				out = append(out, ns+"/"+r.Key+"="+v)
			}
			return out
		}
	}
	for _, r := range sel.MatchExpressions {
		if r.Operator == metav1.LabelSelectorOpExists {
			return []string{ns + "/" + r.Key}
		}
	}
	return []string{ns + "/"}
}

// budgetsForPod returns the budgets whose selector matches pod, sorted by
// name, from an indexer with selectorIndex.
func budgetsForPod(indexer cache.Indexer, pod *v1.Pod) ([]*policy.PodDisruptionBudget, error) {
	keys := make([]string, 0, 2*len(pod.Labels)+1)
	keys = append(keys, pod.Namespace+"/")
	for k, v := range pod.Labels {
		keys = append(keys, pod.Namespace+"/"+k+"="+v, pod.Namespace+"/"+k)
	}
	seen := map[string]bool{}
	var out []*policy.PodDisruptionBudget
	for _, key := range keys {
		objs, err := indexer.ByIndex(selectorIndex, key)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			pdb, ok := obj.(*policy.PodDisruptionBudget)
			if !ok || seen[pdb.Name] {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			seen[pdb.Name] = true
			out = append(out, pdb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
