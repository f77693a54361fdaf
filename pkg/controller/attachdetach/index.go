package attachdetach

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"
)

// podPVCIndex is upstream's pod informer index from "<namespace>/<claim>" to
// the pods whose volumes name the claim (generic ephemeral volumes
// included); the storage controllers sharing the pod informer share it.
const podPVCIndex = "pod-pvc-index"

func addPodPVCIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[podPVCIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{podPVCIndex: func(obj interface{}) ([]string, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return nil, nil
		}
		var keys []string
		for i := range pod.Spec.Volumes {
			vol := &pod.Spec.Volumes[i]
			switch {
			case vol.PersistentVolumeClaim != nil:
				keys = append(keys, pod.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName)
			case vol.Ephemeral != nil:
				keys = append(keys, pod.Namespace+"/"+ephemeral.VolumeClaimName(pod, vol))
			}
		}
		return keys, nil
	}})
}

// nodesUsingClaim returns the nodes of the scheduled pods using a claim.
func nodesUsingClaim(indexer cache.Indexer, namespace, name string) ([]string, error) {
	objs, err := indexer.ByIndex(podPVCIndex, namespace+"/"+name)
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, o := range objs {
		if pod, ok := o.(*v1.Pod); ok && pod.Spec.NodeName != "" {
			nodes = append(nodes, pod.Spec.NodeName)
		}
	}
	return nodes, nil
}
