package storageversiongc

import (
	"fmt"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const (
	// IdentityLabel is the label of a kube-apiserver's identity Lease
	// (upstream's IdentityLeaseComponentLabelKey) ...
	IdentityLabel = "apiserver.kubernetes.io/identity"
	// KubeAPIServer is its value.
	KubeAPIServer = "kube-apiserver"
)

// isIdentityLease reports whether lease is a kube-apiserver's identity
// Lease. Identity Leases live in kube-system.
func isIdentityLease(lease *coordinationv1.Lease) bool {
	return lease != nil && lease.Namespace == metav1.NamespaceSystem && lease.Labels[IdentityLabel] == KubeAPIServer
}

// leaseDeleted queues the ID of a kube-apiserver whose identity Lease was
// deleted.
func (c *Controller) leaseDeleted(logger klog.Logger, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Lease informer returned non-Lease object", "type", fmt.Sprintf("%T", obj))
		return
	}
	if isIdentityLease(lease) {
		logger.V(4).Info("Observed lease deleted", "lease", klog.KObj(lease))
		c.leaseQueue.Add(lease.Name)
	}
}

// storageVersionChanged queues a StorageVersion with an entry whose
// server has no identity Lease in the cache.
func (c *Controller) storageVersionChanged(logger klog.Logger, obj any) {
	sv, ok := obj.(*apiserverinternalv1alpha1.StorageVersion)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "StorageVersion informer returned non-StorageVersion object", "type", fmt.Sprintf("%T", obj))
		return
	}
	for _, ssv := range sv.Status.StorageVersions {
		lease, err := c.leases.Leases(metav1.NamespaceSystem).Get(ssv.APIServerID)
		if err != nil || !isIdentityLease(lease) {
			logger.V(4).Info("Observed storage version with invalid apiserver entry", "storageVersion", klog.KObj(sv), "apiServerID", ssv.APIServerID)
			c.storageVersionQueue.Add(sv.Name)
			return
		}
	}
}
