package persistentvolume

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodClaimIndex is the name of the pod informer's index by the claims a
// pod uses (namespace/name), generic ephemeral volumes' claims included.
// The name is upstream's; other storage controllers sharing the pod
// informer may add the same index, so it is added only when missing.
const PodClaimIndex = "pod-pvc-index"

// AddPodClaimIndex adds PodClaimIndex to the informer unless it has one.
func AddPodClaimIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[PodClaimIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{PodClaimIndex: podClaimKeys})
}

func podClaimKeys(obj interface{}) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+pod.Name+"-"+vol.Name)
		}
	}
	return keys, nil
}

func (c *Controller) podsUsingClaim(key string) ([]*v1.Pod, error) {
	objs, err := c.podIndexer.ByIndex(PodClaimIndex, key)
	if err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	// The index's order is a set's; names make Events deterministic.
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}
