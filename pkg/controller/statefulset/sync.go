package statefulset

import (
	"context"
	"errors"
	"fmt"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/history"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// sync reconciles the StatefulSet named by key; see the package
// documentation. It is never called concurrently for one key.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	defer func() {
		logger.V(4).Info("Finished syncing statefulset", "key", key, "time", c.clock.Since(start))
	}()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	if err := c.consistency.EnsureReady(nn); err != nil {
		var stale *expectations.StaleCacheError
		if errors.As(err, &stale) {
			staleSyncSkips.WithLabelValues(stale.Resource.Group, stale.Resource.Resource).Inc()
		}
		return err
	}
	set, err := c.setLister.StatefulSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.consistency.Clear(nn, "")
		c.statusSpacer.Forget(key)
		c.creations.forget(key)
		forgetMetrics(namespace, name)
		logger.Info("StatefulSet has been deleted", "key", key)
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		// Validation prevents this; retrying cannot fix it.
		utilruntime.HandleErrorWithContext(ctx, err, "Error converting StatefulSet selector", "key", key)
		return nil
	}
	if err := c.adoptOrphanRevisions(ctx, set, selector); err != nil {
		return err
	}
	pods, err := c.claimPods(ctx, set, selector)
	if err != nil {
		return err
	}
	logger.V(4).Info("Syncing StatefulSet with pods", "statefulSet", klog.KObj(set), "pods", len(pods))
	now := c.clock.Now()
	status, err := c.updateStatefulSet(ctx, set, pods, now)
	if err != nil {
		return err
	}
	logger.V(4).Info("Successfully synced StatefulSet", "statefulSet", klog.KObj(set))
	// Pods ready but not yet available wake the set when the first of
	// them becomes available (minReadySeconds at the latest): one key
	// cannot track every pod's moment.
	if minReady := set.Spec.MinReadySeconds; minReady > 0 && status != nil && status.ReadyReplicas != status.AvailableReplicas {
		d := time.Duration(minReady) * time.Second
		if next, ok := podranking.NextAvailabilityCheck(pods, minReady, now, c.clock); ok {
			d = next
		}
		c.queue.AddAfter(key, d)
	}
	return nil
}

// canAdopt refuses adoptions once an uncached read shows set deleted or
// replaced.
func (c *Controller) canAdopt(set *apps.StatefulSet) func(context.Context) error {
	return controllerref.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if fresh.UID != set.UID {
			return nil, fmt.Errorf("original StatefulSet %v/%v is gone: got uid %v, wanted %v", set.Namespace, set.Name, fresh.UID, set.UID)
		}
		return fresh, nil
	})
}

// adoptOrphanRevisions adopts the orphan revisions set's selector matches.
// Revisions are never released.
func (c *Controller) adoptOrphanRevisions(ctx context.Context, set *apps.StatefulSet, selector labels.Selector) error {
	revs, err := history.List(c.revIndexer, set, selector)
	if err != nil {
		return err
	}
	var m *controllerref.Manager[*apps.ControllerRevision]
	for _, rev := range revs {
		if metav1.GetControllerOfNoCopy(rev) != nil {
			continue
		}
		if m == nil {
			m = history.NewManager(c.history, set, controllerKind, selector, c.canAdopt(set))
		}
		if err := m.Adopt(ctx, rev); err != nil {
			return err
		}
	}
	return nil
}

// claimPods returns the set's pods: those it controls and orphans it
// adopts, that match its selector and whose names make them its members;
// others it controls are released.
func (c *Controller) claimPods(ctx context.Context, set *apps.StatefulSet, selector labels.Selector) ([]*v1.Pod, error) {
	candidates, err := controllerref.PodsByOwner(c.podIndexer, set, controllerKind.Kind, true)
	if err != nil {
		return nil, err
	}
	m := controllerref.NewPodManager(c.podPatcher.PatchPod, set, controllerKind, selector, c.canAdopt(set))
	return m.Claim(ctx, candidates, func(pod *v1.Pod) bool { return isMemberOf(set, pod) })
}
