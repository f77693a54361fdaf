package endpointslice

import (
	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// hintsEnabled reports whether the Service asks for topology-aware hints:
// the deprecated service.kubernetes.io/topology-aware-hints annotation, or
// else service.kubernetes.io/topology-mode, is "Auto" or "auto".
func hintsEnabled(annotations map[string]string) bool {
	val, ok := annotations[v1.DeprecatedAnnotationTopologyAwareHints]
	if !ok {
		if val, ok = annotations[v1.AnnotationTopologyMode]; !ok {
			return false
		}
	}
	return val == "Auto" || val == "auto"
}

// validTrafficDistribution reports whether the Service's
// spec.trafficDistribution is one the controller acts on: PreferClose, and
// with PreferSameTrafficDistribution PreferSameZone and PreferSameNode.
func (r *reconciler) validTrafficDistribution(td *string) bool {
	if td == nil {
		return false
	}
	switch *td {
	case v1.ServiceTrafficDistributionPreferClose:
		return true
	case v1.ServiceTrafficDistributionPreferSameZone, v1.ServiceTrafficDistributionPreferSameNode:
		return r.preferSame
	}
	return false
}

// trafficHints says which hints a ready endpoint gets for a
// trafficDistribution: none (cluster-wide), or its zone, and with
// PreferSameNode its node too. Not-ready endpoints are left as they are.
type trafficHints struct {
	close bool
	nodes bool
}

func trafficHintsFor(td *string) trafficHints {
	if td == nil {
		return trafficHints{}
	}
	switch *td {
	case v1.ServiceTrafficDistributionPreferClose, v1.ServiceTrafficDistributionPreferSameZone:
		return trafficHints{close: true}
	case v1.ServiceTrafficDistributionPreferSameNode:
		return trafficHints{close: true, nodes: true}
	}
	return trafficHints{}
}

// reconcile sets the hints on the slices to create and update, and moves
// unchanged slices whose hints are wrong to update (copied).
func (h trafficHints) reconcile(si *sliceSet) {
	kept := si.unchanged[:0:0]
	for _, s := range si.unchanged {
		if h.needsUpdate(s) {
			si.update = append(si.update, s.DeepCopy())
		} else {
			kept = append(kept, s)
		}
	}
	si.unchanged = kept
	for _, s := range si.create {
		h.apply(s)
	}
	for _, s := range si.update {
		h.apply(s)
	}
}

func (h trafficHints) needsUpdate(s *discovery.EndpointSlice) bool {
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !h.close {
			if ep.Hints != nil {
				return true
			}
			continue
		}
		if !endpointReady(ep) {
			continue
		}
		if ep.Zone != nil {
			if ep.Hints == nil || len(ep.Hints.ForZones) != 1 || ep.Hints.ForZones[0].Name != *ep.Zone {
				return true
			}
		} else if ep.Hints != nil && len(ep.Hints.ForZones) > 0 {
			return true
		}
		if ep.NodeName != nil && h.nodes {
			if ep.Hints == nil || len(ep.Hints.ForNodes) != 1 || ep.Hints.ForNodes[0].Name != *ep.NodeName {
				return true
			}
		} else if ep.Hints != nil && len(ep.Hints.ForNodes) > 0 {
			return true
		}
	}
	return false
}

func (h trafficHints) apply(s *discovery.EndpointSlice) {
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !h.close {
			ep.Hints = nil
			continue
		}
		if !endpointReady(ep) {
			continue
		}
		var zones []discovery.ForZone
		var nodes []discovery.ForNode
		if ep.Zone != nil {
			zones = []discovery.ForZone{{Name: *ep.Zone}}
		}
		if ep.NodeName != nil && h.nodes {
			nodes = []discovery.ForNode{{Name: *ep.NodeName}}
		}
		if zones == nil && nodes == nil {
			ep.Hints = nil
			continue
		}
		ep.Hints = &discovery.EndpointHints{ForZones: zones, ForNodes: nodes}
	}
}
