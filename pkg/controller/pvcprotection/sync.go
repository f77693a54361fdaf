package pvcprotection

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// The Unused condition's reasons and messages, upstream's.
const (
	reasonUsed    = "PodUsingPVC"
	messageUsed   = "A pod is currently referencing this PVC"
	reasonUnused  = "NoPodsUsingPVC"
	messageUnused = "No pods are currently referencing this PVC"
)

// sync brings one claim's Unused condition and protection finalizer up to
// date. lists holds the batch's live pod lists.
func (c *Controller) sync(ctx context.Context, key string, lists *livePods) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pvc, err := c.pvcs.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("PVC not found, ignoring", "PVC", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return err
	}

	if c.managesUnused(pvc) {
		used, err := c.inUse(ctx, pvc, lists, keepsUsed)
		if err != nil {
			return err
		}
		if pvc, err = c.updateUnused(ctx, pvc, used); err != nil {
			return err
		}
	}

	if storageutil.IsDeletionCandidate(pvc, storageutil.PVCProtectionFinalizer) {
		used, err := c.inUse(ctx, pvc, lists, blocksDeletion)
		if err != nil {
			return err
		}
		if !used {
			return c.updateFinalizers(ctx, pvc, storageutil.WithoutFinalizer(pvc.Finalizers, storageutil.PVCProtectionFinalizer), "Removed protection finalizer from PVC")
		}
		logger.V(2).Info("Keeping PVC because it is being used", "PVC", klog.KObj(pvc))
	}
	if storageutil.NeedToAddFinalizer(pvc, storageutil.PVCProtectionFinalizer) {
		return c.updateFinalizers(ctx, pvc, storageutil.WithFinalizer(pvc.Finalizers, storageutil.PVCProtectionFinalizer), "Added protection finalizer to PVC")
	}
	return nil
}

// inUse asks the informer cache first; when it shows no user, the
// namespace's live pod list decides (the cache may lag behind a new pod).
func (c *Controller) inUse(ctx context.Context, pvc *v1.PersistentVolumeClaim, lists *livePods, uses usesFunc) (bool, error) {
	logger := klog.FromContext(ctx)
	pods, err := storageutil.PodsUsingClaim(c.podIndexer, pvc.Namespace, pvc.Name)
	if err != nil {
		// The live list below decides.
		logger.Error(err, "Cache-based list of pods failed", "PVC", klog.KObj(pvc))
	}
	for _, pod := range pods {
		if uses(pod, pvc) {
			logger.V(4).Info("Pod uses PVC", "pod", klog.KObj(pod), "PVC", klog.KObj(pvc))
			return true, nil
		}
	}
	live, err := c.livePods(ctx, lists, pvc.Namespace)
	if err != nil {
		return false, err
	}
	for i := range live {
		if uses(&live[i], pvc) {
			logger.V(2).Info("Pod uses PVC", "pod", klog.KObj(&live[i]), "PVC", klog.KObj(pvc))
			return true, nil
		}
	}
	logger.V(4).Info("PVC is unused", "PVC", klog.KObj(pvc))
	return false, nil
}

// updateUnused writes the Unused condition when it disagrees with used and
// returns the claim as it now is.
func (c *Controller) updateUnused(ctx context.Context, pvc *v1.PersistentVolumeClaim, used bool) (*v1.PersistentVolumeClaim, error) {
	existing := findCondition(pvc.Status.Conditions, v1.PersistentVolumeClaimUnused)
	var cond v1.PersistentVolumeClaimCondition
	switch {
	case used && (existing == nil || existing.Status == v1.ConditionTrue):
		cond = v1.PersistentVolumeClaimCondition{Status: v1.ConditionFalse, Reason: reasonUsed, Message: messageUsed}
	case !used && (existing == nil || existing.Status != v1.ConditionTrue):
		cond = v1.PersistentVolumeClaimCondition{Status: v1.ConditionTrue, Reason: reasonUnused, Message: messageUnused}
	default:
		return pvc, nil
	}
	cond.Type = v1.PersistentVolumeClaimUnused
	cond.LastTransitionTime = metav1.NewTime(c.clock.Now())
	clone := pvc.DeepCopy()
	if e := findCondition(clone.Status.Conditions, v1.PersistentVolumeClaimUnused); e != nil {
		*e = cond
	} else {
		clone.Status.Conditions = append(clone.Status.Conditions, cond)
	}
	updated, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("updating the Unused condition of PVC %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	klog.FromContext(ctx).V(3).Info("Updated Unused condition in PVC status", "PVC", klog.KObj(pvc), "status", cond.Status)
	return updated, nil
}

func (c *Controller) updateFinalizers(ctx context.Context, pvc *v1.PersistentVolumeClaim, finalizers []string, done string) error {
	clone := pvc.DeepCopy()
	clone.Finalizers = finalizers
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of PVC %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	klog.FromContext(ctx).V(3).Info(done, "PVC", klog.KObj(pvc))
	return nil
}

func findCondition(conds []v1.PersistentVolumeClaimCondition, t v1.PersistentVolumeClaimConditionType) *v1.PersistentVolumeClaimCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// managesUnused reports whether the controller keeps pvc's Unused condition:
// with the gate on, for bound claims not being deleted (the binder writes
// a pending claim's status).
func (c *Controller) managesUnused(pvc *v1.PersistentVolumeClaim) bool {
	return c.unusedCond && pvc.DeletionTimestamp == nil && pvc.Status.Phase == v1.ClaimBound
}
