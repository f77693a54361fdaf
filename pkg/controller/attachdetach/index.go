package attachdetach

import (
	"k8s.io/client-go/tools/cache"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// nodesUsingClaim returns the nodes of the scheduled pods using a claim
// (storageutil's pod-pvc-index, shared with the other storage controllers).
func nodesUsingClaim(indexer cache.Indexer, namespace, name string) ([]string, error) {
	pods, err := storageutil.PodsUsingClaim(indexer, namespace, name)
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, pod := range pods {
		if pod.Spec.NodeName != "" {
			nodes = append(nodes, pod.Spec.NodeName)
		}
	}
	return nodes, nil
}
