package parity

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Capture is what one run left in the API, before normalisation.
type Capture struct {
	// Objects are the captured objects of every kind but Event.
	Objects []*unstructured.Unstructured
	// Events are the captured core/v1 Events.
	Events []*unstructured.Unstructured
	// EventCounts keeps the number of occurrences of each reduced Event.
	EventCounts bool
	// Notes are printed at the top (a failed step, an unsettled state), so a
	// difference in them shows in the diff.
	Notes []string
}

// Normalizer turns a Capture into text in which only real differences
// between two runs remain.
type Normalizer struct {
	// Known maps cluster-specific literal values (the CA certificate's PEM,
	// the apiserver's URL) to placeholders; they are replaced anywhere in any
	// string.
	Known map[string]string
	// Ignore lists paths to drop, as in Scenario.Ignore.
	Ignore []string
}

// metadataDropped are the metadata fields no two runs share.
var metadataDropped = []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink"}

// Normalize returns the capture as YAML documents, one per object sorted by
// kind, namespace and normalised name, then the reduced Events:
//
//   - uids, resourceVersions, creationTimestamps, managedFields dropped;
//   - every other timestamp replaced by <time>, anywhere in a string;
//   - Known values replaced by their placeholders, other PEM blocks by
//     <pem TYPE>, uids by <uid of Kind ns/name> (<uid> if not captured);
//   - generated names (generateName + random suffix) replaced by the prefix
//     and <N>, numbered in creation order, everywhere, including labels,
//     ownerReferences and Event messages;
//   - ownerReferences pointing at a captured object carry its normalised
//     name;
//   - strings that are IP addresses replaced by <ip-N>, numbered in order
//     of appearance in the output; a finished pod's podIP and podIPs
//     dropped (dropFinishedPodIPs);
//   - lists whose order means nothing and races (a Node's taints) sorted;
//   - a CertificateSigningRequest's certificate replaced by a summary of
//     what two signers must agree on (certificates.go);
//   - the endpointslice-controller's slices merged per Service, address
//     type and ports, their endpoints and Endpoints' subsets and addresses
//     sorted (endpoints.go);
//   - Ignore paths dropped.
func (n *Normalizer) Normalize(c *Capture) (string, error) {
	ignores := make([]ignorePath, 0, len(n.Ignore))
	for _, s := range n.Ignore {
		p, err := parseIgnore(s)
		if err != nil {
			return "", err
		}
		ignores = append(ignores, p)
	}

	objects := mergeManagedSlices(c.Objects)
	captured := map[string]bool{}
	for _, o := range objects {
		captured[o.GetName()] = true
	}
	gen := newGenNames()
	gen.fromObjects(objects)
	gen.fromEvents(c.Events, captured)
	names := gen.placeholders()
	normName := func(name string) string {
		if p, ok := names[name]; ok {
			return p
		}
		return name
	}

	// Literal replacements: known values, generated names, captured uids.
	lits := map[string]string{}
	for k, v := range n.Known {
		lits[k] = v
	}
	for k, v := range names {
		lits[k] = v
	}
	owners := map[string]string{} // uid → normalised name
	for _, o := range objects {
		uid := string(o.GetUID())
		if uid == "" {
			continue
		}
		owners[uid] = normName(o.GetName())
		lits[uid] = "<uid of " + describe(o.GetKind(), o.GetNamespace(), normName(o.GetName())) + ">"
	}
	w := newRewriter(lits)

	type doc struct {
		kind, namespace, name string
		body                  map[string]any
	}
	docs := make([]doc, 0, len(objects))
	for _, o := range objects {
		m := scrubMeta(o.UnstructuredContent(), owners)
		summarizeCertificate(o.GetKind(), m)
		dropFinishedPodIPs(o.GetKind(), m)
		m = w.walk(m).(map[string]any)
		sortUnordered(o.GetKind(), m)
		for _, p := range ignores {
			p.apply(o.GetKind(), m)
		}
		docs = append(docs, doc{kind: o.GetKind(), namespace: o.GetNamespace(), name: normName(o.GetName()), body: m})
	}
	sort.Slice(docs, func(i, j int) bool {
		a, b := docs[i], docs[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	var ranks ipRanks
	for _, d := range docs {
		sortEndpointLists(d.kind, d.body, &ranks)
		ranks.add(d.body)
	}
	events := reduceEvents(c.Events, c.EventCounts, w, owners, ignores)

	var ips ipNumberer
	var b strings.Builder
	for _, note := range c.Notes {
		fmt.Fprintf(&b, "# note: %s\n", strings.ReplaceAll(w.value(note), "\n", "\n#   "))
	}
	for _, d := range docs {
		y, err := yaml.Marshal(ips.walk(d.body))
		if err != nil {
			return "", fmt.Errorf("parity: %s: %w", describe(d.kind, d.namespace, d.name), err)
		}
		fmt.Fprintf(&b, "--- # %s\n%s", describe(d.kind, d.namespace, d.name), y)
	}
	if len(events) > 0 {
		list := make([]any, len(events))
		for i, e := range events {
			list[i] = ips.walk(e)
		}
		y, err := yaml.Marshal(list)
		if err != nil {
			return "", fmt.Errorf("parity: events: %w", err)
		}
		fmt.Fprintf(&b, "--- # Events\n%s", y)
	}
	return b.String(), nil
}

// dropFinishedPodIPs removes status.podIP and status.podIPs from a pod in
// phase Succeeded or Failed. They are kwok's bookkeeping, not a
// controller's: kwok hands out IPs from per-CIDR pools whose state depends
// on timing (a pod it reaches before its node's podCIDR, a released IP
// handed out again), so two runs can number a finished pod's IP
// differently, and no controller reads a finished pod's IP (endpoints
// leave terminal pods out). A running pod's IPs stay: EndpointSlices are
// checked against them.
func dropFinishedPodIPs(kind string, obj map[string]any) {
	if kind != "Pod" {
		return
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		return
	}
	if phase, _ := status["phase"].(string); phase != "Succeeded" && phase != "Failed" {
		return
	}
	delete(status, "podIP")
	delete(status, "podIPs")
}

// scrubMeta returns a deep copy of obj without the metadata fields no two
// runs share; ownerReferences lose their uid and, when the owner is in
// owners (uid → normalised name), are renamed to it.
func scrubMeta(obj map[string]any, owners map[string]string) map[string]any {
	m := deepCopyMap(obj)
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return m
	}
	for _, f := range metadataDropped {
		delete(md, f)
	}
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		ref, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if uid, _ := ref["uid"].(string); uid != "" {
			if name, ok := owners[uid]; ok {
				ref["name"] = name
			}
		}
		delete(ref, "uid")
	}
	return m
}

// describe names an object as "Kind namespace/name" or "Kind name".
func describe(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// mustYAML renders a JSON-like value; it cannot fail on what the API
// returns.
func mustYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// deepCopyMap copies a JSON-like map; unlike runtime.DeepCopyJSON it takes
// any scalar type.
func deepCopyMap(m map[string]any) map[string]any {
	return deepCopyValue(m).(map[string]any)
}

func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}

// unorderedLists are lists whose order carries no meaning and is decided by
// a race in upstream itself, with the fields to sort their items by. A
// Node's taints: node-lifecycle-controller's NoSchedule pass (driven by the
// Node's update) and its NoExecute tainter (every 100ms) add theirs in
// either order; no consumer of taints reads their order.
var unorderedLists = map[string]struct {
	path []string
	keys []string
}{
	"Node": {path: []string{"spec", "taints"}, keys: []string{"key", "effect", "value"}},
}

// sortUnordered sorts the unordered lists of an object of the given kind.
func sortUnordered(kind string, obj map[string]any) {
	u, ok := unorderedLists[kind]
	if !ok {
		return
	}
	items, found, err := unstructured.NestedSlice(obj, u.path...)
	if !found || err != nil {
		return
	}
	sortKey := func(item any) string {
		m, _ := item.(map[string]any)
		parts := make([]string, len(u.keys))
		for i, k := range u.keys {
			parts[i] = fmt.Sprint(m[k])
		}
		return strings.Join(parts, "\x00")
	}
	sort.SliceStable(items, func(i, j int) bool { return sortKey(items[i]) < sortKey(items[j]) })
	_ = unstructured.SetNestedSlice(obj, items, u.path...)
}
