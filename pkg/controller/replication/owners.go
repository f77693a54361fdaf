package replication

import (
	"context"
	"fmt"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
)

// owners is replicaset.Owners over ReplicationControllers.
type owners struct {
	informer cache.SharedIndexInformer
	lister   corelisters.ReplicationControllerLister
	client   kubernetes.Interface
}

var _ replicaset.Owners = (*owners)(nil)

func newOwners(informer coreinformers.ReplicationControllerInformer, client kubernetes.Interface) *owners {
	return &owners{informer: informer.Informer(), lister: informer.Lister(), client: client}
}

func (o *owners) Informer() cache.SharedIndexInformer { return o.informer }

func (o *owners) Get(namespace, name string) (*apps.ReplicaSet, error) {
	rc, err := o.lister.ReplicationControllers(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (o *owners) ForPod(pod *v1.Pod) []*apps.ReplicaSet {
	rcs, err := o.lister.GetPodControllers(pod)
	if err != nil {
		return nil
	}
	if len(rcs) > 1 {
		// The controllerRef decides; overlapping selectors are still the user's mistake.
		utilruntime.HandleError(fmt.Errorf("user error! more than one ReplicationController is selecting pods with labels: %+v", pod.Labels))
	}
	out := make([]*apps.ReplicaSet, len(rcs))
	for i, rc := range rcs {
		out[i] = toReplicaSet(rc)
	}
	return out
}

// ControlledBy returns nothing: upstream looks related owners up in an
// index that only recognises ReplicaSets, so ReplicationControllers never
// rank pods by co-location with their siblings'.
func (o *owners) ControlledBy(types.UID) []*apps.ReplicaSet { return nil }

func (o *owners) GetFresh(ctx context.Context, namespace, name string) (*apps.ReplicaSet, error) {
	rc, err := o.client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (o *owners) UpdateStatus(ctx context.Context, rs *apps.ReplicaSet) (*apps.ReplicaSet, error) {
	rc, err := o.client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, toReplicationController(rs), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}
