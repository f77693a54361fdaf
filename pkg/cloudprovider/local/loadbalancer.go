package local

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"
)

// errNotSynced is returned until the Service informer has synced: before
// that, the addresses Services hold are unknown and none can be handed out.
var errNotSynced = errors.New("local: the Service informer has not synced yet")

// loadBalancers hands out pool addresses to LoadBalancer Services.
type loadBalancers struct {
	pools map[v1.IPFamily]pool

	mu       sync.Mutex
	services corelisters.ServiceLister // nil until SetInformers
	synced   cache.InformerSynced
	// reserved holds the addresses handed out to each Service (by UID)
	// since the process started, which its status may not show yet.
	reserved map[types.UID][]netip.Addr
}

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancers(pools map[v1.IPFamily]pool) *loadBalancers {
	return &loadBalancers{pools: pools, reserved: map[types.UID][]netip.Addr{}}
}

func (lb *loadBalancers) setServices(inf coreinformers.ServiceInformer) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.services = inf.Lister()
	lb.synced = inf.Informer().HasSynced
}

// GetLoadBalancerName is upstream's default name.
func (lb *loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *v1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(svc)
}

// GetLoadBalancer reports the Service's addresses: those reserved for it,
// else the pool addresses its status shows.
func (lb *loadBalancers) GetLoadBalancer(_ context.Context, _ string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	addrs := lb.reserved[svc.UID]
	if len(addrs) == 0 {
		for _, a := range statusAddrs(svc) {
			if lb.inPool(a) {
				addrs = append(addrs, a)
			}
		}
	}
	if len(addrs) == 0 {
		return nil, false, nil
	}
	return lbStatus(addrs), true, nil
}

// EnsureLoadBalancer gives the Service one address per IP family it has
// and a pool serves: the one it asked for (spec.loadBalancerIP), else the
// one it holds, else the lowest free one.
func (lb *loadBalancers) EnsureLoadBalancer(_ context.Context, _ string, svc *v1.Service, _ []*v1.Node) (*v1.LoadBalancerStatus, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	taken, err := lb.takenBesides(svc)
	if err != nil {
		return nil, err
	}
	addrs, err := lb.pick(svc, taken)
	if err != nil {
		return nil, err
	}
	lb.reserved[svc.UID] = addrs
	return lbStatus(addrs), nil
}

// UpdateLoadBalancer has nothing to do: no traffic goes through nodes.
func (lb *loadBalancers) UpdateLoadBalancer(context.Context, string, *v1.Service, []*v1.Node) error {
	return nil
}

// EnsureLoadBalancerDeleted forgets the Service's reservation. Its
// addresses are free again once no Service's status shows them.
func (lb *loadBalancers) EnsureLoadBalancerDeleted(_ context.Context, _ string, svc *v1.Service) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	delete(lb.reserved, svc.UID)
	return nil
}

// takenBesides returns the addresses svc may not have: those reserved for
// other Services and those other Services' statuses show, except where
// svc's status shows the same address and svc is the older Service (two
// statuses showing one address are only possible if someone wrote them by
// hand; the older Service keeps it). Reservations of Services that no
// longer exist are dropped on the way.
func (lb *loadBalancers) takenBesides(svc *v1.Service) (map[netip.Addr]bool, error) {
	taken := map[netip.Addr]bool{}
	for uid, addrs := range lb.reserved {
		if uid == svc.UID {
			continue
		}
		for _, a := range addrs {
			taken[a] = true
		}
	}
	if lb.services == nil {
		return taken, nil
	}
	if !lb.synced() {
		return nil, errNotSynced
	}
	all, err := lb.services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("local: listing Services: %w", err)
	}
	mine := map[netip.Addr]bool{}
	for _, a := range statusAddrs(svc) {
		mine[a] = true
	}
	present := map[types.UID]bool{svc.UID: true}
	for _, other := range all {
		present[other.UID] = true
		if other.UID == svc.UID {
			continue
		}
		for _, a := range statusAddrs(other) {
			if lb.inPool(a) && !(mine[a] && older(svc, other)) {
				taken[a] = true
			}
		}
	}
	for uid := range lb.reserved {
		if !present[uid] {
			delete(lb.reserved, uid)
		}
	}
	return taken, nil
}

func (lb *loadBalancers) pick(svc *v1.Service, taken map[netip.Addr]bool) ([]netip.Addr, error) {
	families := svc.Spec.IPFamilies
	if len(families) == 0 {
		families = []v1.IPFamily{v1.IPv4Protocol}
	}
	var requested netip.Addr
	if s := svc.Spec.LoadBalancerIP; s != "" {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("local: spec.loadBalancerIP %q is not an IP address", s)
		}
		if !lb.inPool(a) {
			return nil, fmt.Errorf("local: spec.loadBalancerIP %s is in no load-balancer pool", a)
		}
		if taken[a] {
			return nil, fmt.Errorf("local: spec.loadBalancerIP %s is used by another Service", a)
		}
		requested = a.Unmap()
	}
	held := append(append([]netip.Addr(nil), lb.reserved[svc.UID]...), statusAddrs(svc)...)

	var out []netip.Addr
	for _, family := range families {
		p, ok := lb.pools[family]
		if !ok {
			continue
		}
		if requested.IsValid() && familyOf(requested) == family {
			out = append(out, requested)
			continue
		}
		if a, ok := firstUsable(held, p, taken); ok {
			out = append(out, a)
			continue
		}
		a, ok := p.firstFree(taken)
		if !ok {
			return nil, fmt.Errorf("local: no free address in load-balancer pool %s", p.prefix)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("local: no load-balancer pool for IP families %v (loadBalancerCIDRs in --cloud-config)", families)
	}
	return out, nil
}

func firstUsable(addrs []netip.Addr, p pool, taken map[netip.Addr]bool) (netip.Addr, bool) {
	for _, a := range addrs {
		if p.contains(a) && !taken[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func (lb *loadBalancers) inPool(a netip.Addr) bool {
	for _, p := range lb.pools {
		if p.contains(a) {
			return true
		}
	}
	return false
}

// statusAddrs returns the IP addresses of a Service's load-balancer status.
func statusAddrs(svc *v1.Service) []netip.Addr {
	var out []netip.Addr
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

func lbStatus(addrs []netip.Addr) *v1.LoadBalancerStatus {
	st := &v1.LoadBalancerStatus{}
	for _, a := range addrs {
		mode := v1.LoadBalancerIPModeVIP
		st.Ingress = append(st.Ingress, v1.LoadBalancerIngress{IP: a.String(), IPMode: &mode})
	}
	return st
}

// older orders Services by creation, then namespace and name.
func older(a, b *v1.Service) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
