package parity

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Labels of EndpointSlices (k8s.io/api/discovery/v1).
const (
	sliceServiceLabel   = "kubernetes.io/service-name"
	sliceManagedByLabel = "endpointslice.kubernetes.io/managed-by"
	// sliceController is the manager whose slices are merged.
	sliceController = "endpointslice-controller.k8s.io"
)

// mergeManagedSlices replaces the EndpointSlices of the
// endpointslice-controller by one object per Service, address type and
// set of ports, named "<service>-merged-<addresstype>-<ports>", holding
// every endpoint of the group. How upstream spreads a group's endpoints
// over slices depends on the order its informers delivered pod changes
// and on Go map order (it fills slices from a map), so the number of
// slices and which endpoint lands in which are not the same from one
// upstream run to the next beyond the first slice; what the group holds
// is. Annotations are the union of the slices'. Other managers' slices
// are left as they are.
func mergeManagedSlices(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	groups := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() != "EndpointSlice" || o.GetLabels()[sliceManagedByLabel] != sliceController {
			out = append(out, o)
			continue
		}
		svc := o.GetLabels()[sliceServiceLabel]
		addressType, _, _ := unstructured.NestedString(o.Object, "addressType")
		name := svc + "-merged-" + strings.ToLower(addressType) + "-" + portNumbers(o.Object["ports"])
		key := o.GetNamespace() + "/" + name
		g, ok := groups[key]
		if !ok {
			g = o.DeepCopy()
			g.SetName(name)
			g.SetGenerateName("")
			groups[key] = g
			out = append(out, g)
			continue
		}
		eps, _ := g.Object["endpoints"].([]any)
		more, _ := o.Object["endpoints"].([]any)
		if len(eps)+len(more) > 0 {
			g.Object["endpoints"] = append(eps, deepCopyValue(more).([]any)...)
		}
		ann := g.GetAnnotations()
		for k, v := range o.GetAnnotations() {
			if _, ok := ann[k]; !ok {
				if ann == nil {
					ann = map[string]string{}
				}
				ann[k] = v
			}
		}
		g.SetAnnotations(ann)
	}
	return out
}

// portNumbers names a slice's port set: its port numbers in order,
// "none" for none.
func portNumbers(v any) string {
	ports, _ := v.([]any)
	var nums []string
	for _, p := range ports {
		m, _ := p.(map[string]any)
		nums = append(nums, fmt.Sprint(m["port"]))
	}
	if len(nums) == 0 {
		return "none"
	}
	sort.Strings(nums)
	return strings.Join(nums, "-")
}

// sortEndpointLists sorts the lists of endpoints whose order carries no
// meaning and is not the same from one run to the next: a slice's
// endpoints (upstream places them in map order), and an Endpoints
// object's subsets and addresses (upstream sorts them by IP and uid, and
// by hashes of them, all of which differ between runs). Items are sorted
// by their normalised content with IP addresses masked, since IPs are
// numbered only afterwards, in order of appearance; items equal but for
// their IPs by the IPs' ranks in ranks (their order of appearance in the
// documents before), so that a set of IPs listed in several objects is
// listed, and numbered, alike in each. It runs after the ignores, on the
// documents in output order, each ranked after it is sorted.
func sortEndpointLists(kind string, obj map[string]any, ranks *ipRanks) {
	switch kind {
	case "EndpointSlice":
		if eps, ok := obj["endpoints"].([]any); ok {
			sortMasked(eps, ranks)
		}
	case "Endpoints":
		subsets, ok := obj["subsets"].([]any)
		if !ok {
			return
		}
		for _, ss := range subsets {
			m, _ := ss.(map[string]any)
			for _, f := range []string{"addresses", "notReadyAddresses"} {
				if l, ok := m[f].([]any); ok {
					sortMasked(l, ranks)
				}
			}
		}
		sortMasked(subsets, ranks)
	}
}

// sortMasked sorts items by their YAML with every IP address masked, then
// by the ranks of their IPs.
func sortMasked(items []any, ranks *ipRanks) {
	keys := make([]string, len(items))
	tie := make([]string, len(items))
	for i, it := range items {
		keys[i] = mustYAML(maskIPs(deepCopyValue(it)))
		tie[i] = ranks.key(it)
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if keys[idx[a]] != keys[idx[b]] {
			return keys[idx[a]] < keys[idx[b]]
		}
		return tie[idx[a]] < tie[idx[b]]
	})
	sorted := make([]any, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	copy(items, sorted)
}

func maskIPs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = maskIPs(e)
		}
	case []any:
		for i, e := range v {
			v[i] = maskIPs(e)
		}
	case string:
		if _, err := netip.ParseAddr(v); err == nil {
			return "<ip>"
		}
	}
	return v
}

// ipRanks numbers IP addresses in order of appearance, visiting values as
// ipNumberer does (map keys sorted).
type ipRanks struct {
	seen map[string]int
}

func canonicalIP(s string) (string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", false
	}
	return a.String(), true
}

// add ranks the IPs of v not seen yet.
func (r *ipRanks) add(v any) {
	r.visit(v, func(ip string) {
		if r.seen == nil {
			r.seen = map[string]int{}
		}
		if _, ok := r.seen[ip]; !ok {
			r.seen[ip] = len(r.seen)
		}
	})
}

// key renders the ranks of v's IPs in order; unseen IPs sort last, by
// value.
func (r *ipRanks) key(v any) string {
	var parts []string
	r.visit(v, func(ip string) {
		if n, ok := r.seen[ip]; ok {
			parts = append(parts, fmt.Sprintf("%08d", n))
		} else {
			parts = append(parts, "~"+ip)
		}
	})
	return strings.Join(parts, ",")
}

func (r *ipRanks) visit(v any, f func(ip string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r.visit(v[k], f)
		}
	case []any:
		for _, e := range v {
			r.visit(e, f)
		}
	case string:
		if ip, ok := canonicalIP(v); ok {
			f(ip)
		}
	}
}
