package storageversiongc

import (
	"context"
	"fmt"
	"slices"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/storageversion"
	"k8s.io/klog/v2"
)

// syncLease removes the entries of the server whose identity Lease name
// was deleted from every StorageVersion, unless the Lease is back.
func (c *Controller) syncLease(ctx context.Context, name string) error {
	_, err := c.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	// Identity Leases are rarely deleted: one list per deletion.
	list, err := c.client.InternalV1alpha1().StorageVersions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var errs []error
	for i := range list.Items {
		sv := &list.Items[i]
		kept := slices.DeleteFunc(slices.Clone(sv.Status.StorageVersions), func(ssv apiserverinternalv1alpha1.ServerStorageVersion) bool {
			return ssv.APIServerID == name
		})
		if len(kept) == len(sv.Status.StorageVersions) {
			continue
		}
		if err := c.updateOrDelete(ctx, sv, kept); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// syncStorageVersion removes the StorageVersion's entries whose server has
// no identity Lease.
func (c *Controller) syncStorageVersion(ctx context.Context, name string) error {
	sv, err := c.client.InternalV1alpha1().StorageVersions().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []apiserverinternalv1alpha1.ServerStorageVersion
	for _, ssv := range sv.Status.StorageVersions {
		alive, err := c.serverAlive(ctx, ssv.APIServerID)
		if err != nil {
			return err
		}
		if alive {
			kept = append(kept, ssv)
		}
	}
	if len(kept) == len(sv.Status.StorageVersions) {
		return nil
	}
	return c.updateOrDelete(ctx, sv, kept)
}

// serverAlive reports whether the kube-apiserver id has an identity Lease.
func (c *Controller) serverAlive(ctx context.Context, id string) (bool, error) {
	lease, err := c.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the identity Lease of kube-apiserver %q: %w", id, err)
	}
	return isIdentityLease(lease), nil
}

// updateOrDelete writes sv's status with only the kept entries, or deletes
// sv if none are left. sv is a fresh copy from the API server, not a cached
// object, and may be changed.
func (c *Controller) updateOrDelete(ctx context.Context, sv *apiserverinternalv1alpha1.StorageVersion, kept []apiserverinternalv1alpha1.ServerStorageVersion) error {
	logger := klog.FromContext(ctx)
	svs := c.client.InternalV1alpha1().StorageVersions()
	if len(kept) == 0 {
		err := svs.Delete(ctx, sv.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting StorageVersion %s: %w", sv.Name, err)
		}
		logger.V(2).Info("Deleted StorageVersion with no live kube-apiserver entries", "storageVersion", klog.KObj(sv))
		return nil
	}
	sv.Status.StorageVersions = kept
	storageversion.SetCommonEncodingVersion(sv)
	if _, err := svs.UpdateStatus(ctx, sv, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the status of StorageVersion %s: %w", sv.Name, err)
	}
	logger.V(2).Info("Removed stale kube-apiserver entries from StorageVersion", "storageVersion", klog.KObj(sv), "remaining", len(kept))
	return nil
}
