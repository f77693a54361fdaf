package replicaset

import (
	"context"
	"fmt"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// replicaSetOwners is Owners for ReplicaSets themselves.
type replicaSetOwners struct {
	informer cache.SharedIndexInformer
	lister   appslisters.ReplicaSetLister
	client   kubernetes.Interface
}

var _ Owners = (*replicaSetOwners)(nil)

func newReplicaSetOwners(informer appsinformers.ReplicaSetInformer, client kubernetes.Interface) (*replicaSetOwners, error) {
	if err := controllerref.AddControllerUIDIndex(informer.Informer()); err != nil {
		return nil, fmt.Errorf("adding ReplicaSet index %q: %w", controllerref.ControllerUIDIndex, err)
	}
	return &replicaSetOwners{informer: informer.Informer(), lister: informer.Lister(), client: client}, nil
}

func (o *replicaSetOwners) Informer() cache.SharedIndexInformer { return o.informer }

func (o *replicaSetOwners) Get(namespace, name string) (*apps.ReplicaSet, error) {
	return o.lister.ReplicaSets(namespace).Get(name)
}

func (o *replicaSetOwners) ForPod(pod *v1.Pod) []*apps.ReplicaSet {
	rss, err := o.lister.GetPodReplicaSets(pod)
	if err != nil {
		return nil
	}
	if len(rss) > 1 {
		// The controllerRef decides; overlapping selectors are still the user's mistake.
		utilruntime.HandleError(fmt.Errorf("user error! more than one ReplicaSet is selecting pods with labels: %+v", pod.Labels))
	}
	return rss
}

func (o *replicaSetOwners) ControlledBy(uid types.UID) []*apps.ReplicaSet {
	rss, err := controllerref.ByControllerUID[*apps.ReplicaSet](o.informer.GetIndexer(), uid)
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	return rss
}

func (o *replicaSetOwners) GetFresh(ctx context.Context, namespace, name string) (*apps.ReplicaSet, error) {
	return o.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (o *replicaSetOwners) UpdateStatus(ctx context.Context, rs *apps.ReplicaSet) (*apps.ReplicaSet, error) {
	return o.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
}
