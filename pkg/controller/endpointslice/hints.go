package endpointslice

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/klog/v2"
)

// sliceSet is one address type's slices of a Service after placement:
// those to create and update (owned, modifiable) and the unchanged ones
// (the cache's: copied before any change).
type sliceSet struct {
	serviceKey  string
	addressType discovery.AddressType
	create      []*discovery.EndpointSlice
	update      []*discovery.EndpointSlice
	unchanged   []*discovery.EndpointSlice
}

func endpointReady(ep *discovery.Endpoint) bool {
	return ep.Conditions.Ready != nil && *ep.Conditions.Ready
}

func readyEndpoints(slices []*discovery.EndpointSlice) int {
	n := 0
	for _, s := range slices {
		for i := range s.Endpoints {
			if endpointReady(&s.Endpoints[i]) {
				n++
			}
		}
	}
	return n
}

// addHints gives zone hints for topology-mode Auto: each ready endpoint a
// hint for its own zone, then endpoints of zones with more than their
// CPU share moved to zones with less. Unchanged slices whose hints still
// fit are kept. Any endpoint without a zone, or node information that
// does not allow hints, removes them all instead. It returns the Events to
// record.
func (t *topologyCache) addHints(logger klog.Logger, si *sliceSet) []event {
	allocs, ev := t.allocations(readyEndpoints(si.create) + readyEndpoints(si.update) + readyEndpoints(si.unchanged))
	if ev != nil {
		logger.Info(ev.message+", removing hints", "key", si.serviceKey, "addressType", si.addressType)
		ev.message = withAddressType(ev.message, si.addressType)
		t.removeHints(si.serviceKey, si.addressType)
		si.removeHints()
		return []event{*ev}
	}
	allocated := si.keepFittingUnchanged(allocs)
	allocatable := append(append([]*discovery.EndpointSlice(nil), si.create...), si.update...)
	for _, s := range allocatable {
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			if !endpointReady(ep) {
				continue
			}
			if ep.Zone == nil || *ep.Zone == "" {
				logger.Info("Endpoint found without zone specified, removing hints", "key", si.serviceKey, "addressType", si.addressType)
				t.removeHints(si.serviceKey, si.addressType)
				si.removeHints()
				return []event{{v1.EventTypeWarning, reasonHintsDisabled, withAddressType(msgNoZoneSpecified, si.addressType)}}
			}
			allocated[*ep.Zone]++
			ep.Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: *ep.Zone}}}
		}
	}
	giving, receiving := givingAndReceiving(allocs, allocated)
	for zone, diff := range redistribute(logger, allocatable, giving, receiving) {
		allocated[zone] += diff
	}
	if len(allocated) == 0 {
		logger.V(2).Info("No hints allocated for zones, removing them", "key", si.serviceKey, "addressType", si.addressType)
		t.removeHints(si.serviceKey, si.addressType)
		si.removeHints()
		return []event{{v1.EventTypeWarning, reasonHintsDisabled, withAddressType(msgNoAllocatedHintsForZones, si.addressType)}}
	}
	if t.setHints(si.serviceKey, si.addressType, allocated) {
		return nil
	}
	logger.Info("Topology Aware Hints has been enabled, adding hints.", "key", si.serviceKey, "addressType", si.addressType)
	return []event{{v1.EventTypeNormal, reasonHintsEnabled, withAddressType(msgHintsEnabled, si.addressType)}}
}

// keepFittingUnchanged counts the hints of the unchanged slices whose
// hints are all valid under allocs; the others move to update (copied).
func (si *sliceSet) keepFittingUnchanged(allocs map[string]allocation) zoneCounts {
	allocated := zoneCounts{}
	kept := si.unchanged[:0:0]
	for _, s := range si.unchanged {
		counts := hintsByZone(s, allocated, allocs)
		if counts == nil {
			si.update = append(si.update, s.DeepCopy())
			continue
		}
		kept = append(kept, s)
		for zone, n := range counts {
			allocated[zone] += n
		}
	}
	si.unchanged = kept
	return allocated
}

// hintsByZone counts a slice's hints per zone, or returns nil if they are
// not valid: a ready endpoint without hints, a hint for a zone without
// allocation, or more hints than a zone's maximum.
func hintsByZone(s *discovery.EndpointSlice, allocated zoneCounts, allocs map[string]allocation) zoneCounts {
	counts := zoneCounts{}
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !endpointReady(ep) {
			continue
		}
		if ep.Hints == nil || len(ep.Hints.ForZones) == 0 {
			return nil
		}
		for _, z := range ep.Hints.ForZones {
			if _, ok := allocs[z.Name]; !ok {
				return nil
			}
			counts[z.Name]++
		}
	}
	for zone, n := range counts {
		a, ok := allocs[zone]
		if !ok || n+allocated[zone] > a.maximum {
			return nil
		}
	}
	return counts
}

// removeHints clears the hints of the slices to create and update, and
// moves unchanged slices that carry hints to update, without them.
func (si *sliceSet) removeHints() {
	for _, s := range append(append([]*discovery.EndpointSlice(nil), si.create...), si.update...) {
		for i := range s.Endpoints {
			s.Endpoints[i].Hints = nil
		}
	}
	kept := si.unchanged[:0:0]
	for _, s := range si.unchanged {
		if !hasHints(s) {
			kept = append(kept, s)
			continue
		}
		c := s.DeepCopy()
		for i := range c.Endpoints {
			c.Endpoints[i].Hints = nil
		}
		si.update = append(si.update, c)
	}
	si.unchanged = kept
}

func hasHints(s *discovery.EndpointSlice) bool {
	for i := range s.Endpoints {
		if s.Endpoints[i].Hints != nil {
			return true
		}
	}
	return false
}

// givingAndReceiving returns how many endpoints each zone should give to
// and receive from others to approach its desired allocation: whole
// endpoints, largest needs first, stopping below half an endpoint.
func givingAndReceiving(allocs map[string]allocation, allocated zoneCounts) (giving, receiving zoneCounts) {
	wantGive, wantReceive := map[string]float64{}, map[string]float64{}
	for zone, a := range allocs {
		have := float64(allocated[zone])
		if have > a.desired {
			wantGive[zone] = have - a.desired
		} else if have < a.desired {
			wantReceive[zone] = a.desired - have
		}
	}
	giving, receiving = zoneCounts{}, zoneCounts{}
	for {
		gz, g := most(wantGive)
		rz, r := most(wantReceive)
		if gz == "" || rz == "" || (g < 1.0 && r < 1.0) || g < 0.5 || r < 0.5 {
			return giving, receiving
		}
		giving[gz]++
		wantGive[gz]--
		receiving[rz]++
		wantReceive[rz]--
	}
}

// most returns the zone with the largest positive value (ties: the first
// in name order; upstream takes map order).
func most(zones map[string]float64) (string, float64) {
	zone, num := "", 0.0
	for _, z := range sortedZones(zones) {
		if n := zones[z]; n > num {
			zone, num = z, n
		}
	}
	return zone, num
}

func sortedZones[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for z := range m {
		out = append(out, z)
	}
	sort.Strings(out)
	return out
}

// redistribute re-points the hints of ready endpoints of giving zones to
// receiving zones and returns the change per zone.
func redistribute(logger klog.Logger, slices []*discovery.EndpointSlice, giving, receiving zoneCounts) zoneCounts {
	moved := zoneCounts{}
	for _, s := range slices {
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			if !endpointReady(ep) {
				continue
			}
			if len(giving) == 0 || len(receiving) == 0 {
				return moved
			}
			if ep.Zone == nil || *ep.Zone == "" {
				logger.Info("Endpoint found without zone specified")
				continue
			}
			from := *ep.Zone
			if giving[from] <= 0 {
				continue
			}
			for _, to := range sortedZones(receiving) {
				if receiving[to] <= 0 {
					continue
				}
				ep.Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: to}}}
				decrement(giving, from)
				decrement(receiving, to)
				moved[to]++
				moved[from]--
				break
			}
		}
	}
	return moved
}

func decrement(m zoneCounts, zone string) {
	if m[zone] <= 1 {
		delete(m, zone)
		return
	}
	m[zone]--
}
