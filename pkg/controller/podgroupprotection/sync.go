package podgroupprotection

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// sync removes the finalizer from a PodGroup being deleted once no active
// pod names it.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Processing PodGroup", "podGroup", key)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(fmt.Errorf("error parsing PodGroup key %q: %w", key, err))
	}
	pg, err := c.podGroups.PodGroups(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("PodGroup not found, ignoring", "podGroup", key)
		return nil
	}
	if err != nil {
		return err
	}
	if !deletionCandidate(pg) {
		return nil
	}
	pods, err := c.podIndexer.ByIndex(activePodIndex, key)
	if err != nil {
		return fmt.Errorf("index-based list of active pods failed for PodGroup %s: %w", key, err)
	}
	if len(pods) > 0 {
		if pod, ok := pods[0].(*v1.Pod); ok {
			logger.V(4).Info("Pod is using PodGroup", "pod", klog.KObj(pod), "podGroup", klog.KObj(pg))
		}
		logger.V(4).Info("Keeping PodGroup finalizer because it is still being used by pods", "podGroup", klog.KObj(pg))
		return nil
	}
	logger.V(4).Info("No active pods found using PodGroup", "podGroup", klog.KObj(pg))
	clone := pg.DeepCopy()
	clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == Finalizer })
	if _, err := c.client.SchedulingV1beta1().PodGroups(namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("removing the protection finalizer from PodGroup %s: %w", key, err)
	}
	logger.V(3).Info("Removed protection finalizer from PodGroup", "podGroup", klog.KObj(pg))
	return nil
}
