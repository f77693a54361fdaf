package endpointslicemirroring

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// endpointID is what makes two endpoints the same endpoint (upstream's
// endpoint hash): addresses, hostname and the target's namespace and name.
// Conditions, node, zone and the rest of the target may change in place.
type endpointID struct {
	addresses          string
	hostname           string
	namespace, refName string
}

func idOf(e *discovery.Endpoint) endpointID {
	addrs := slices.Clone(e.Addresses)
	slices.Sort(addrs)
	id := endpointID{addresses: strings.Join(addrs, "\x00")}
	if e.Hostname != nil {
		id.hostname = *e.Hostname
	}
	if e.TargetRef != nil {
		id.namespace, id.refName = e.TargetRef.Namespace, e.TargetRef.Name
	}
	return id
}

// endpointSet is a set of endpoints by identity that keeps insertion order,
// so that slices are written in a stable order.
type endpointSet struct {
	index map[endpointID]int
	items []discovery.Endpoint
}

func newEndpointSet() *endpointSet {
	return &endpointSet{index: map[endpointID]int{}}
}

// insert adds e, or replaces the endpoint of the same identity in place.
func (s *endpointSet) insert(e discovery.Endpoint) {
	id := idOf(&e)
	if i, ok := s.index[id]; ok {
		s.items[i] = e
		return
	}
	s.index[id] = len(s.items)
	s.items = append(s.items, e)
}

// get returns the endpoint with e's identity, or nil.
func (s *endpointSet) get(e *discovery.Endpoint) *discovery.Endpoint {
	if i, ok := s.index[idOf(e)]; ok {
		return &s.items[i]
	}
	return nil
}

func (s *endpointSet) len() int { return len(s.items) }

// equalBeyondID reports whether two endpoints of the same identity are
// equal in everything else the controller writes or could find changed:
// node, zone, conditions and the target (its resourceVersion aside).
func equalBeyondID(a, b *discovery.Endpoint) bool {
	return ptrEqual(a.NodeName, b.NodeName) && ptrEqual(a.Zone, b.Zone) &&
		ptrEqual(a.Conditions.Ready, b.Conditions.Ready) &&
		ptrEqual(a.Conditions.Serving, b.Conditions.Serving) &&
		ptrEqual(a.Conditions.Terminating, b.Conditions.Terminating) &&
		targetEqual(a.TargetRef, b.TargetRef)
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func targetEqual(a, b *v1.ObjectReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.ResourceVersion, y.ResourceVersion = "", ""
	return x == y
}
