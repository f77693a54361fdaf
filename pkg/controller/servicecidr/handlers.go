package servicecidr

import (
	"fmt"
	"net/netip"

	networking "k8s.io/api/networking/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// onServiceCIDRAdd enqueues a new ServiceCIDR and every ServiceCIDR it
// overlaps: a deletion blocked on them may now be unblocked, as the new
// one may contain their addresses.
func (c *Controller) onServiceCIDRAdd(logger klog.Logger, obj any) {
	cidr, ok := obj.(*networking.ServiceCIDR)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in ServiceCIDR event", "type", fmt.Sprintf("%T", obj))
		return
	}
	c.queue.Add(cidr.Name)
	for _, name := range c.overlapping(cidr) {
		c.queue.Add(name)
	}
}

// onServiceCIDRChange enqueues an updated or deleted ServiceCIDR.
func (c *Controller) onServiceCIDRChange(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// onIPAddress enqueues the ServiceCIDRs holding an allocated or released
// address: it may block or unblock their deletion.
func (c *Controller) onIPAddress(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ip, ok := obj.(*networking.IPAddress)
	if !ok {
		return
	}
	for _, name := range c.containing(ip) {
		c.queue.Add(name)
	}
}

// overlapping returns the names of the ServiceCIDRs that overlap any of
// cidr's prefixes (cidr itself included).
func (c *Controller) overlapping(cidr *networking.ServiceCIDR) []string {
	names := map[string]bool{}
	for _, s := range cidr.Spec.CIDRs {
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			continue
		}
		for _, other := range c.cidrsWhere(func(p netip.Prefix) bool { return p.Overlaps(prefix) }) {
			names[other.Name] = true
		}
	}
	return keys(names)
}

// containing returns the names of the ServiceCIDRs an IPAddress allocated
// by the kube-apiserver lies in. Other managers' addresses block nothing.
func (c *Controller) containing(ip *networking.IPAddress) []string {
	if ip.Labels[networking.LabelManagedBy] != IPAllocatorManager {
		return nil
	}
	addr, err := netip.ParseAddr(ip.Name)
	if err != nil {
		return nil // The API validates the name as an address.
	}
	names := map[string]bool{}
	for _, cidr := range c.cidrsContaining(addr) {
		names[cidr.Name] = true
	}
	return keys(names)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
