package endpointslicemirroring

import (
	"context"
	"maps"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Event reasons, upstream's.
const (
	// ReasonInvalidIPAddress: an address of the Endpoints is no IP.
	ReasonInvalidIPAddress = "InvalidIPAddress"
	// ReasonTooManyAddresses: a subset has more addresses than are mirrored.
	ReasonTooManyAddresses = "TooManyAddressesToMirror"
)

// plan is the writes one sync makes.
type plan struct {
	create, update, delete []*discovery.EndpointSlice
}

// totals counts endpoint changes, for metrics.
type totals struct {
	added, updated, removed int
}

func (t totals) zero() bool { return t == totals{} }

// reconcile writes the slices of ep so that they hold what desiredFor
// computes, given the slices the cache has.
func (c *Controller) reconcile(ctx context.Context, ep *v1.Endpoints, existing []*discovery.EndpointSlice) error {
	d := desiredFor(ep, int(c.cfg.MaxEndpointsPerSubset))
	c.reportSkipped(ctx, ep, d)

	byKey := slicesByKey(existing)
	var p plan
	var sum totals
	eff := efficiency{}
	for _, key := range sortedKeys(d.groups) {
		g := d.groups[key]
		gp, gt := c.planGroup(ep, byKey[key], g, key.addressType())
		p.create = append(p.create, gp.create...)
		p.update = append(p.update, gp.update...)
		p.delete = append(p.delete, gp.delete...)
		sum.added, sum.updated, sum.removed = sum.added+gt.added, sum.updated+gt.updated, sum.removed+gt.removed
		eff.endpoints += g.endpoints.len()
		eff.slices += len(byKey[key]) + len(gp.create) - len(gp.delete)
		eff.desiredSlices += ceilDiv(g.endpoints.len(), int(c.cfg.MaxEndpointsPerSubset))
	}
	// Slices of a port set or address type no longer wanted go.
	for _, key := range sortedKeys(byKey) {
		if _, ok := d.groups[key]; !ok {
			p.delete = append(p.delete, byKey[key]...)
		}
	}
	endpointsAdded.WithLabelValues().Observe(float64(sum.added))
	endpointsUpdated.WithLabelValues().Observe(float64(sum.updated))
	endpointsRemoved.WithLabelValues().Observe(float64(sum.removed))
	c.metrics.update(types.NamespacedName{Namespace: ep.Namespace, Name: ep.Name}, eff)

	recycle(&p)
	return c.apply(ctx, ep, p)
}

// reportSkipped logs and records Events for addresses not mirrored: one
// Event for invalid IPs, another when addresses went over the limit.
func (c *Controller) reportSkipped(ctx context.Context, ep *v1.Endpoints, d *desired) {
	addressesSkipped.WithLabelValues().Observe(float64(d.skipped))
	logger := klog.FromContext(ctx)
	if d.invalid > 0 {
		logger.Info("Addresses in Endpoints are not valid IPs, they will not be mirrored to an EndpointSlice", "endpoints", klog.KObj(ep), "invalidAddresses", d.invalid)
		c.recorder.Eventf(ep, v1.EventTypeWarning, ReasonInvalidIPAddress,
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", d.invalid)
	}
	if d.skipped > d.invalid {
		logger.Info("Addresses in Endpoints were skipped due to exceeding MaxEndpointsPerSubset", "skippedAddresses", d.skipped, "endpoints", klog.KObj(ep))
		c.recorder.Eventf(ep, v1.EventTypeWarning, ReasonTooManyAddresses,
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", c.cfg.MaxEndpointsPerSubset, d.skipped)
	}
}

// planGroup decides the writes for one group: its first existing slice is
// kept, rewritten if anything in it differs, the others deleted; without
// an existing slice one is created; without endpoints all go.
func (c *Controller) planGroup(ep *v1.Endpoints, existing []*discovery.EndpointSlice, g *group, addrType discovery.AddressType) (plan, totals) {
	var p plan
	var t totals
	if g.endpoints.len() == 0 {
		for _, s := range existing {
			t.removed += len(s.Endpoints)
		}
		p.delete = existing
		return p, t
	}
	name := ""
	if len(existing) == 0 {
		t.added = g.endpoints.len()
	} else {
		first := existing[0]
		p.delete = existing[1:]
		t = changes(first, g.endpoints)
		if t.zero() && metaUpToDate(ep, first) {
			if !c.tracker.Has(first) {
				c.tracker.Update(first)
			}
			return p, t
		}
		name = first.Name
	}
	s := newSlice(ep, g.ports, addrType, name)
	n := min(g.endpoints.len(), int(c.cfg.MaxEndpointsPerSubset))
	s.Endpoints = append(s.Endpoints, g.endpoints.items[:n]...)
	if name == "" {
		p.create = []*discovery.EndpointSlice{s}
	} else {
		p.update = []*discovery.EndpointSlice{s}
	}
	return p, t
}

// metaUpToDate reports whether a slice already has the labels, annotations
// and owner the Endpoints gives it. (Upstream compares the Endpoints'
// labels with the slice's minus the two it sets, so an Endpoints labelled
// with either rewrites its slice, unchanged, on every sync.) An owner reference to an Endpoints of
// the same name with another uid (deleted and recreated) needs a rewrite.
func metaUpToDate(ep *v1.Endpoints, s *discovery.EndpointSlice) bool {
	if !maps.Equal(wantedLabels(ep), s.Labels) || !maps.Equal(wantedAnnotations(ep), s.Annotations) {
		return false
	}
	for _, ref := range s.OwnerReferences {
		if ref.Kind == "Endpoints" && ref.Name == ep.Name && ref.UID != ep.UID {
			return false
		}
	}
	return true
}

// changes counts how a slice's endpoints differ from the wanted ones.
func changes(s *discovery.EndpointSlice, want *endpointSet) totals {
	var t totals
	matches := 0
	for i := range s.Endpoints {
		got := want.get(&s.Endpoints[i])
		if got == nil {
			t.removed++
			continue
		}
		matches++
		if !equalBeyondID(got, &s.Endpoints[i]) {
			t.updated++
		}
	}
	t.added = want.len() - matches
	return t
}

// slicesByKey groups slices by address type and port set, each group in
// name order (the first one is kept).
func slicesByKey(slices []*discovery.EndpointSlice) map[groupKey][]*discovery.EndpointSlice {
	out := map[groupKey][]*discovery.EndpointSlice{}
	for _, s := range slices {
		// A copy: computing the key sorts the ports, and s is the cache's.
		key := newGroupKey(append([]discovery.EndpointPort(nil), s.Ports...), s.AddressType)
		out[key] = append(out[key], s)
	}
	for _, ss := range out {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
	}
	return out
}

// recycle turns a create and a delete of the same address type into an
// update of the slice that would be deleted (the address type of a slice
// cannot change). The update keeps the create's generateName, as
// upstream's does (an in-place update clears it).
func recycle(p *plan) {
	var create, del []*discovery.EndpointSlice
	used := map[*discovery.EndpointSlice]bool{}
	for _, s := range p.create {
		i := slices.IndexFunc(p.delete, func(d *discovery.EndpointSlice) bool {
			return !used[d] && d.AddressType == s.AddressType
		})
		if i < 0 {
			create = append(create, s)
			continue
		}
		used[p.delete[i]] = true
		s.Name = p.delete[i].Name
		p.update = append(p.update, s)
	}
	for _, d := range p.delete {
		if !used[d] {
			del = append(del, d)
		}
	}
	p.create, p.delete = create, del
}

func sortedKeys[V any](m map[groupKey]V) []groupKey {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
