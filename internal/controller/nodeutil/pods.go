package nodeutil

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodNodeNameIndex is the name of the Pod informer index by spec.nodeName
// (upstream's name, so that the index is shared with any controller that
// adds it under the same name).
const PodNodeNameIndex = "spec.nodeName"

// AddPodNodeNameIndexer adds the spec.nodeName index to a Pod informer
// unless it already has one. Unbound Pods are not indexed.
func AddPodNodeNameIndexer(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[PodNodeNameIndex]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{PodNodeNameIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return nil, nil
		}
		return []string{pod.Spec.NodeName}, nil
	}})
	if err != nil {
		return fmt.Errorf("adding the %s Pod index: %w", PodNodeNameIndex, err)
	}
	return nil
}

// PodsOnNode returns the cached Pods bound to nodeName, from an indexer
// that has the PodNodeNameIndex. The Pods are shared with the cache: do not
// modify them.
func PodsOnNode(indexer cache.Indexer, nodeName string) ([]*v1.Pod, error) {
	objs, err := indexer.ByIndex(PodNodeNameIndex, nodeName)
	if err != nil {
		return nil, fmt.Errorf("listing Pods on node %q: %w", nodeName, err)
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}
