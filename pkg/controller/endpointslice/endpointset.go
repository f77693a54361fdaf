package endpointslice

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// endpointKey identifies an endpoint across syncs by what upstream hashes:
// its addresses (in any order), hostname and target pod. Conditions,
// node, zone and hints may change in place.
type endpointKey string

func keyOf(ep *discovery.Endpoint) endpointKey {
	addrs := ep.Addresses
	if !sort.StringsAreSorted(addrs) {
		addrs = append([]string(nil), addrs...)
		sort.Strings(addrs)
	}
	var b strings.Builder
	for _, a := range addrs {
		b.WriteString(a)
		b.WriteByte(',')
	}
	b.WriteByte('|')
	if ep.Hostname != nil {
		b.WriteString(*ep.Hostname)
	}
	b.WriteByte('|')
	if ep.TargetRef != nil {
		b.WriteString(ep.TargetRef.Namespace)
		b.WriteByte('/')
		b.WriteString(ep.TargetRef.Name)
	}
	return endpointKey(b.String())
}

// endpointSet is the desired endpoints of one port group, by key.
type endpointSet map[endpointKey]*discovery.Endpoint

// sorted returns the endpoints in key order: the order in which the
// remaining ones are placed (upstream places them in map order).
func (s endpointSet) sorted() []*discovery.Endpoint {
	keys := make([]endpointKey, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]*discovery.Endpoint, len(keys))
	for i, k := range keys {
		out[i] = s[k]
	}
	return out
}

// sameBeyondKey reports whether two endpoints of one key are equal in
// everything upstream compares besides the key: node, zone, conditions,
// and the target reference apart from its resourceVersion. Hints are not
// compared; they are reconciled afterwards.
func sameBeyondKey(a, b *discovery.Endpoint) bool {
	return equalStringPtr(a.NodeName, b.NodeName) &&
		equalStringPtr(a.Zone, b.Zone) &&
		equalBoolPtr(a.Conditions.Ready, b.Conditions.Ready) &&
		equalBoolPtr(a.Conditions.Serving, b.Conditions.Serving) &&
		equalBoolPtr(a.Conditions.Terminating, b.Conditions.Terminating) &&
		equalRefIgnoringVersion(a.TargetRef, b.TargetRef)
}

func equalStringPtr(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func equalBoolPtr(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func equalRefIgnoringVersion(a, b *v1.ObjectReference) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	x, y := *a, *b
	x.ResourceVersion, y.ResourceVersion = "", ""
	return x == y
}
