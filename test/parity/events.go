package parity

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// eventKind is the kind a CaptureSpec names to capture reduced Events.
const eventKind = "Event"

// reduceEvents reduces core/v1 Events to (source, involved object, type,
// reason, message), normalised like objects, merges equal ones and counts
// their occurrences (count, or series.count for events.k8s.io Events), and
// sorts them. ignores with kind Event apply to the reduced fields.
func reduceEvents(events []*unstructured.Unstructured, counts bool, w *rewriter, owners map[string]string, ignores []ignorePath) []map[string]any {
	type key struct{ source, object, typ, reason, message string }
	total := map[key]int64{}
	for _, e := range events {
		o := e.Object
		str := func(f ...string) string {
			s, _, _ := unstructured.NestedString(o, f...)
			return s
		}
		source := eventSource(e)
		name := str("involvedObject", "name")
		if n, ok := owners[str("involvedObject", "uid")]; ok {
			name = n
		} else {
			name = w.value(name)
		}
		r := map[string]any{
			"source":  source,
			"object":  describe(str("involvedObject", "kind"), str("involvedObject", "namespace"), name),
			"type":    str("type"),
			"reason":  str("reason"),
			"message": w.value(str("message")),
		}
		for _, p := range ignores {
			p.apply(eventKind, r)
		}
		s := func(f string) string { v, _ := r[f].(string); return v }
		k := key{s("source"), s("object"), s("type"), s("reason"), s("message")}
		n, _, _ := unstructured.NestedInt64(o, "series", "count")
		if n == 0 {
			n, _, _ = unstructured.NestedInt64(o, "count")
		}
		total[k] += max(n, 1)
	}
	keys := make([]key, 0, len(total))
	for k := range total {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		for _, c := range [][2]string{{a.object, b.object}, {a.reason, b.reason}, {a.typ, b.typ}, {a.source, b.source}, {a.message, b.message}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		m := map[string]any{}
		for f, v := range map[string]string{"source": k.source, "object": k.object, "type": k.typ, "reason": k.reason, "message": k.message} {
			if v != "" {
				m[f] = v
			}
		}
		if counts {
			m["count"] = total[k]
		}
		out = append(out, m)
	}
	return out
}
