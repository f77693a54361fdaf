package vacprotection

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// sync removes the finalizer from a deleted class nothing refers to and
// adds it to a live class that lacks it.
func (c *Controller) sync(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	vac, err := c.vacs.Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("VAC not found, ignoring", "VAC", klog.KRef("", name))
		return nil
	}
	if err != nil {
		return err
	}
	if storageutil.IsDeletionCandidate(vac, storageutil.VACProtectionFinalizer) {
		used, err := c.inUse(name)
		if err != nil {
			return err
		}
		if !used {
			return c.update(ctx, vac, storageutil.WithoutFinalizer(vac.Finalizers, storageutil.VACProtectionFinalizer), "Removed protection finalizer from VAC")
		}
		logger.V(4).Info("Keeping VAC because it is being used", "VAC", klog.KObj(vac))
	}
	if storageutil.NeedToAddFinalizer(vac, storageutil.VACProtectionFinalizer) {
		return c.update(ctx, vac, storageutil.WithFinalizer(vac.Finalizers, storageutil.VACProtectionFinalizer), "Added protection finalizer to VAC")
	}
	return nil
}

// inUse reports whether a cached volume or claim names the class.
func (c *Controller) inUse(name string) (bool, error) {
	for _, idx := range []interface {
		ByIndex(string, string) ([]any, error)
	}{c.pvIndexer, c.pvcIndexer} {
		objs, err := idx.ByIndex(classIndex, name)
		if err != nil {
			return false, fmt.Errorf("listing the users of VAC %s: %w", name, err)
		}
		if len(objs) > 0 {
			return true, nil
		}
	}
	return false, nil
}

func (c *Controller) update(ctx context.Context, vac *storagev1.VolumeAttributesClass, finalizers []string, done string) error {
	clone := vac.DeepCopy()
	clone.Finalizers = finalizers
	if _, err := c.client.StorageV1().VolumeAttributesClasses().Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of VAC %s: %w", vac.Name, err)
	}
	klog.FromContext(ctx).V(3).Info(done, "VAC", klog.KObj(vac))
	return nil
}
