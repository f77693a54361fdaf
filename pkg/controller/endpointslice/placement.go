package endpointslice

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/klog/v2"
)

// placement is what one port group's slices need: slices to create,
// update and delete, and how many endpoints were added and removed.
type placement struct {
	create, update, delete []*discovery.EndpointSlice
	added, removed         int
}

// placeGroup places the desired endpoints of one port group into its
// existing slices (the cache's, never modified) with upstream's algorithm,
// which favours few writes over tightly packed slices:
//
//  1. each existing slice keeps the endpoints still desired, in their
//     current order and desired form; one that lost or changed an endpoint,
//     or whose Service labels changed, is to be updated, one left empty is
//     to be deleted, the others are unchanged;
//  2. the remaining endpoints first fill the slices to be updated anyway,
//     fullest first;
//  3. what remains goes into the unchanged slice it fills most exactly, if
//     fewer than a slice's capacity remain, else into new slices.
//
// Upstream takes endpoints and equally good slices in map order; here
// endpoints go in key order and ties between slices are broken by name,
// so the same input always gives the same slices.
func (r *reconciler) placeGroup(logger klog.Logger, svc *v1.Service, existing []*discovery.EndpointSlice, desired endpointSet, ports []discovery.EndpointPort, addressType discovery.AddressType) placement {
	var p placement
	existing = sortedByName(existing)
	var toUpdate, unchanged []*discovery.EndpointSlice
	for _, s := range existing {
		kept := make([]discovery.Endpoint, 0, len(s.Endpoints))
		changed := false
		for i := range s.Endpoints {
			k := keyOf(&s.Endpoints[i])
			want, ok := desired[k]
			if !ok {
				continue
			}
			kept = append(kept, *want)
			if !sameBeyondKey(want, &s.Endpoints[i]) {
				changed = true
			}
			delete(desired, k)
		}
		labels, relabelled := sliceLabels(logger, s, svc, r.manager)
		switch {
		case changed || len(kept) != len(s.Endpoints):
			p.removed += len(s.Endpoints) - len(kept)
			if len(kept) == 0 {
				p.delete = append(p.delete, s)
				continue
			}
			c := copySlice(s, kept)
			c.Labels = labels
			toUpdate = append(toUpdate, c)
		case relabelled:
			c := copySlice(s, append([]discovery.Endpoint(nil), s.Endpoints...))
			c.Labels = labels
			toUpdate = append(toUpdate, c)
		default:
			unchanged = append(unchanged, s)
		}
	}

	remaining := desired.sorted()
	p.added = len(remaining)
	max := int(r.maxEndpointsPerSlice)
	take := func(s *discovery.EndpointSlice) {
		n := min(max-len(s.Endpoints), len(remaining))
		if n <= 0 {
			return
		}
		for _, ep := range remaining[:n] {
			s.Endpoints = append(s.Endpoints, *ep)
		}
		remaining = remaining[n:]
	}

	// 2. Fill the slices that are written anyway, fullest first.
	if len(remaining) > 0 && len(toUpdate) > 0 {
		byLen := append([]*discovery.EndpointSlice(nil), toUpdate...)
		sort.SliceStable(byLen, func(i, j int) bool { return len(byLen[i].Endpoints) > len(byLen[j].Endpoints) })
		for _, s := range byLen {
			take(s)
		}
	}

	// 3. One unchanged slice if the rest fits, else new slices.
	for len(remaining) > 0 {
		var fill *discovery.EndpointSlice
		if len(remaining) < max && len(unchanged) > 0 {
			if i := sliceToFill(unchanged, len(remaining), max); i >= 0 {
				fill = copySlice(unchanged[i], append([]discovery.Endpoint(nil), unchanged[i].Endpoints...))
				unchanged = append(unchanged[:i:i], unchanged[i+1:]...)
				toUpdate = append(toUpdate, fill)
			}
		}
		if fill == nil {
			fill = newSlice(logger, svc, ports, addressType, r.manager)
			p.create = append(p.create, fill)
		}
		take(fill)
	}
	p.update = sortedByName(toUpdate)
	return p
}

// sliceToFill returns the index of the slice that n more endpoints fill
// most exactly without exceeding max, or -1.
func sliceToFill(slices []*discovery.EndpointSlice, n, max int) int {
	best, bestDiff := -1, max
	for i, s := range slices {
		diff := max - (n + len(s.Endpoints))
		if diff >= 0 && diff < bestDiff {
			best, bestDiff = i, diff
			if diff == 0 {
				break
			}
		}
	}
	return best
}

// copySlice returns a copy of s to modify, with endpoints as its
// endpoints: its own metadata and ports, so that nothing written to it
// reaches the informer cache.
func copySlice(s *discovery.EndpointSlice, endpoints []discovery.Endpoint) *discovery.EndpointSlice {
	c := &discovery.EndpointSlice{
		TypeMeta:    s.TypeMeta,
		ObjectMeta:  *s.ObjectMeta.DeepCopy(),
		AddressType: s.AddressType,
		Endpoints:   endpoints,
	}
	if s.Ports != nil {
		c.Ports = make([]discovery.EndpointPort, len(s.Ports))
		for i := range s.Ports {
			s.Ports[i].DeepCopyInto(&c.Ports[i])
		}
	}
	return c
}

func sortedByName(slices []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	out := append([]*discovery.EndpointSlice(nil), slices...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
