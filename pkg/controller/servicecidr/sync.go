package servicecidr

import (
	"context"
	"net/netip"
	"time"

	v1 "k8s.io/api/core/v1"
	networking "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

// Upstream's condition messages and Event reason.
const (
	readyMessage       = "Kubernetes Service CIDR is ready"
	terminatingMessage = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	// ReasonStatusError is the Event reason when Ready=True cannot be written.
	ReasonStatusError = "KubernetesServiceCIDRError"
)

// sync brings one ServiceCIDR in line: a live one gets the finalizer and
// Ready=True; one being deleted loses the finalizer once no IPAddress
// depends on it and the grace period has passed, and until then shows
// Ready=False, reason Terminating, if addresses hold it.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished syncing ServiceCIDR", "ServiceCIDR", key, "elapsed", time.Since(start))
	}()

	cidr, err := c.cidrLister.Get(key)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(4).Info("ServiceCIDR no longer exist", "ServiceCIDR", key)
		return nil
	case err != nil:
		return err
	}
	if cidr.DeletionTimestamp != nil {
		return c.syncDeleting(ctx, cidr)
	}
	if err := c.addFinalizer(ctx, cidr); err != nil {
		return err
	}
	ready := metav1.Condition{
		Type:    networking.ServiceCIDRConditionReady,
		Status:  metav1.ConditionTrue,
		Message: readyMessage,
	}
	if err := c.setCondition(ctx, cidr, ready); err != nil {
		logger.Info("error updating default ServiceCIDR status", "error", err)
		c.recorder.Eventf(cidr, v1.EventTypeWarning, ReasonStatusError, "The ServiceCIDR Status can not be set to Ready=True")
		return err
	}
	return nil
}

// syncDeleting handles a ServiceCIDR being deleted.
func (c *Controller) syncDeleting(ctx context.Context, cidr *networking.ServiceCIDR) error {
	free, err := c.canDelete(ctx, cidr)
	if err != nil {
		return err
	}
	if !free {
		// Re-evaluated on the next ServiceCIDR or IPAddress event.
		return c.setCondition(ctx, cidr, metav1.Condition{
			Type:    networking.ServiceCIDRConditionReady,
			Status:  metav1.ConditionFalse,
			Reason:  networking.ServiceCIDRReasonTerminating,
			Message: terminatingMessage,
		})
	}
	if wait := DeletionGracePeriod - c.clock.Since(cidr.DeletionTimestamp.Time); wait > 0 {
		c.queue.AddAfter(cidr.Name, wait)
		return nil
	}
	return c.removeFinalizer(ctx, cidr)
}

// canDelete reports whether deleting cidr orphans no IPAddress: every one
// of its prefixes lies in another ServiceCIDR, or no address allocated by
// the kube-apiserver lies in cidr alone.
func (c *Controller) canDelete(ctx context.Context, cidr *networking.ServiceCIDR) (bool, error) {
	logger := klog.FromContext(ctx)
	if c.hasParent(cidr) {
		logger.Info("Deleting ServiceCIDR contained in other ServiceCIDR", "ServiceCIDR", cidr.String())
		return true, nil
	}
	for _, s := range cidr.Spec.CIDRs {
		selector := labels.Set{
			networking.LabelIPAddressFamily: string(ipFamily(s)),
			networking.LabelManagedBy:       IPAllocatorManager,
		}.AsSelectorPreValidated()
		ips, err := c.ipLister.List(selector)
		if err != nil {
			return false, err
		}
		for _, ip := range ips {
			addr, err := netip.ParseAddr(ip.Name)
			if err != nil {
				logger.Info("[SHOULD NOT HAPPEN] unexpected error parsing IPAddress", "IPAddress", ip.Name, "error", err)
				continue
			}
			holders := c.cidrsContaining(addr)
			if len(holders) == 1 && holders[0].Name == cidr.Name {
				logger.Info("Deleting ServiceCIDR blocked by IP address", "IPAddress", addr.String())
				return false, nil
			}
		}
	}
	logger.Info("Deleting ServiceCIDR no longer have orphan IPs", "ServiceCIDR", cidr.String())
	return true, nil
}

// hasParent reports whether each of cidr's prefixes is contained in a
// prefix of another ServiceCIDR (or listed twice). Prefixes that do not
// parse are not counted against it, as upstream.
func (c *Controller) hasParent(cidr *networking.ServiceCIDR) bool {
	for _, s := range cidr.Spec.CIDRs {
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			continue
		}
		holders := c.cidrsContainingPrefix(prefix)
		if len(holders) == 0 || len(holders) == 1 && holders[0].Name == cidr.Name {
			return false
		}
	}
	return true
}

// ipFamily is the family label value of the addresses of a CIDR string,
// "" when it does not parse.
func ipFamily(cidr string) v1.IPFamily {
	switch netutils.IPFamilyOfCIDRString(cidr) {
	case netutils.IPv4:
		return v1.IPv4Protocol
	case netutils.IPv6:
		return v1.IPv6Protocol
	}
	return v1.IPFamilyUnknown
}
