package parity

import (
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	// uuidRE matches a uid anywhere in a string (lease holders embed them).
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// timeRE matches an RFC 3339 timestamp anywhere in a string.
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	// apiAccessRE matches the projected token volume the ServiceAccount
	// admission plugin adds to every pod, named with a random suffix of its
	// own (not through generateName).
	apiAccessRE = regexp.MustCompile(`\bkube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
	// pemRE matches one PEM block.
	pemRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]+)-----\n[\s\S]*?-----END [A-Z0-9 ]+-----\n?`)
)

// Placeholders the normaliser writes.
const (
	timePlaceholder = "<time>"
	uidPlaceholder  = "<uid>"
)

// rewriter rewrites every string of a capture: literal replacements (known
// cluster values, generated names, known uids; longest first, one pass),
// then unknown PEM blocks, uids and timestamps.
type rewriter struct {
	lit *strings.Replacer
}

// newRewriter builds a rewriter from literal → placeholder pairs.
func newRewriter(pairs map[string]string) *rewriter {
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		if k != "" {
			keys = append(keys, k)
		}
	}
	// Longest first, so that a name wins over a name it starts with.
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	args := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k, pairs[k])
	}
	return &rewriter{lit: strings.NewReplacer(args...)}
}

// key rewrites a map key: literals and uids only.
func (w *rewriter) key(s string) string {
	s = w.lit.Replace(s)
	return uuidRE.ReplaceAllString(s, uidPlaceholder)
}

// value rewrites a string value.
func (w *rewriter) value(s string) string {
	s = w.lit.Replace(s)
	s = pemRE.ReplaceAllString(s, "<pem ${1}>")
	s = uuidRE.ReplaceAllString(s, uidPlaceholder)
	s = apiAccessRE.ReplaceAllString(s, "kube-api-access-<random>")
	return timeRE.ReplaceAllString(s, timePlaceholder)
}

// walk rewrites every key and string of a JSON-like value in place and
// returns it.
func (w *rewriter) walk(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[w.key(k)] = w.walk(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = w.walk(e)
		}
		return v
	case string:
		return w.value(v)
	}
	return v
}

// ipNumberer maps every string that is exactly an IP address to <ip-N>,
// numbered in order of first appearance. Its walk must visit values in a
// deterministic order, which is why it runs on the sorted output.
type ipNumberer struct {
	seen map[string]string
}

func (n *ipNumberer) value(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return s
	}
	key := a.String()
	if p, ok := n.seen[key]; ok {
		return p
	}
	if n.seen == nil {
		n.seen = map[string]string{}
	}
	p := "<ip-" + strconv.Itoa(len(n.seen)+1) + ">"
	n.seen[key] = p
	return p
}

// walk visits map keys in sorted order (the order YAML prints them).
func (n *ipNumberer) walk(v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v[k] = n.walk(v[k])
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = n.walk(e)
		}
		return v
	case string:
		return n.value(v)
	}
	return v
}
