package nodeipam

import (
	"errors"
	"fmt"
	"net"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	netutils "k8s.io/utils/net"
)

// holding is what one Node holds: a block per cluster CIDR (nil where it
// has none in that cluster CIDR).
type holding struct {
	uid   types.UID
	cidrs []*net.IPNet
	// confirmed is true once the Node showed these CIDRs or our patch
	// setting them succeeded. An unconfirmed holding was handed out but
	// may not have reached the Node; its CIDRs stay reserved for that Node
	// and the same ones are patched again.
	confirmed bool
}

// allocator is the in-memory IPAM state: a CIDRSet per cluster CIDR and
// what each Node holds. Blocks are counted per holder, so that a block two
// Nodes claim (set by hand) is freed only when both are gone.
type allocator struct {
	mu      sync.Mutex
	sets    []*CIDRSet
	holders map[string]int // CIDR → number of Nodes holding it
	nodes   map[string]holding
}

// newAllocator returns an allocator over cfg's cluster CIDRs with the
// blocks of the service ranges reserved.
func newAllocator(cfg *Config) (*allocator, error) {
	a := &allocator{holders: map[string]int{}, nodes: map[string]holding{}}
	for i, cidr := range cfg.ClusterCIDRs {
		set, err := NewCIDRSet(cidr, cfg.NodeMaskSizes[i])
		if err != nil {
			return nil, fmt.Errorf("cluster CIDR %v: %w", cidr, err)
		}
		for _, svc := range cfg.ServiceCIDRs {
			if set.Overlaps(svc) {
				if err := set.Reserve(svc); err != nil {
					return nil, fmt.Errorf("reserving service CIDR %v in cluster CIDR %v: %w", svc, cidr, err)
				}
			}
		}
		a.sets = append(a.sets, set)
	}
	return a, nil
}

// observe records the podCIDRs node shows as its holding, occupying them
// and releasing whatever it held before that it no longer shows. CIDRs
// that cannot be held (garbage, outside the cluster CIDRs, a family the
// cluster no longer has) are left out and reported in err. released tells
// whether blocks became free.
func (a *allocator) observe(node *v1.Node) (released bool, err error) {
	cidrs := make([]*net.IPNet, len(a.sets))
	var errs []error
	for i, s := range node.Spec.PodCIDRs {
		_, cidr, perr := netutils.ParseCIDRSloppy(s)
		switch {
		case perr != nil:
			errs = append(errs, fmt.Errorf("failed to parse node %s, CIDR %s", node.Name, s))
		case i >= len(a.sets):
			errs = append(errs, fmt.Errorf("node:%s has an allocated cidr: %v at index:%v that does not exist in cluster cidrs configuration", node.Name, s, i))
		case !a.sets[i].Overlaps(cidr):
			errs = append(errs, fmt.Errorf("failed to mark cidr[%v] at idx [%v] as occupied for node: %v: cidr %v is out the range of cluster cidr %v", cidr, i, node.Name, cidr, a.sets[i].cluster))
		default:
			cidrs[i] = cidr
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	released = a.replace(node.Name, holding{uid: node.UID, cidrs: cidrs, confirmed: true})
	return released, errors.Join(errs...)
}

// allocate hands a block of every cluster CIDR to the Node, unconfirmed.
// When one cluster CIDR is full, nothing is handed out.
func (a *allocator) allocate(name string, uid types.UID) ([]*net.IPNet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cidrs := make([]*net.IPNet, len(a.sets))
	for i, set := range a.sets {
		cidr, err := set.AllocateNext()
		if err != nil {
			for j := range i {
				_ = a.sets[j].Release(cidrs[j])
			}
			return nil, fmt.Errorf("failed to allocate cidr from cluster cidr at idx:%v: %w", i, err)
		}
		cidrs[i] = cidr
	}
	a.replace(name, holding{uid: uid, cidrs: cidrs})
	return cidrs, nil
}

// confirm marks the Node's holding as set on the Node.
func (a *allocator) confirm(name string, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h, ok := a.nodes[name]; ok && h.uid == uid {
		h.confirmed = true
		a.nodes[name] = h
	}
}

// lookup returns what the Node holds.
func (a *allocator) lookup(name string) (holding, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.nodes[name]
	return h, ok
}

// forget releases what the Node held and reports whether blocks became free.
func (a *allocator) forget(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.replace(name, holding{})
}

// replace makes h the Node's holding (none when h holds nothing): it takes
// the CIDRs h adds and gives back the ones it drops. Callers hold a.mu.
func (a *allocator) replace(name string, h holding) (released bool) {
	old := a.nodes[name]
	for i := range a.sets {
		oldCIDR, newCIDR := at(old.cidrs, i), at(h.cidrs, i)
		if sameCIDR(oldCIDR, newCIDR) {
			continue
		}
		if newCIDR != nil {
			a.hold(i, newCIDR)
		}
		if oldCIDR != nil && a.unhold(i, oldCIDR) {
			released = true
		}
	}
	if len(h.cidrs) == 0 || allNil(h.cidrs) {
		delete(a.nodes, name)
	} else {
		a.nodes[name] = h
	}
	return released
}

// hold counts one more holder of cidr, occupying it for the first.
func (a *allocator) hold(i int, cidr *net.IPNet) {
	key := cidr.String()
	if a.holders[key] == 0 {
		// observe checked that cidr overlaps the set, so this cannot fail.
		_ = a.sets[i].Occupy(cidr)
	}
	a.holders[key]++
}

// unhold counts one holder of cidr less and releases it after the last,
// reporting whether it did.
func (a *allocator) unhold(i int, cidr *net.IPNet) bool {
	key := cidr.String()
	if a.holders[key] > 1 {
		a.holders[key]--
		return false
	}
	delete(a.holders, key)
	_ = a.sets[i].Release(cidr)
	return true
}

func at(cidrs []*net.IPNet, i int) *net.IPNet {
	if i < len(cidrs) {
		return cidrs[i]
	}
	return nil
}

func sameCIDR(a, b *net.IPNet) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.String() == b.String()
}

func allNil(cidrs []*net.IPNet) bool {
	for _, c := range cidrs {
		if c != nil {
			return false
		}
	}
	return true
}

// cidrStrings formats cidrs for spec.podCIDRs.
func cidrStrings(cidrs []*net.IPNet) []string {
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = c.String()
	}
	return out
}
