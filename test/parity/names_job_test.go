package parity

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An Indexed Job's pods (<job>-<index>-<random>) that are gone are known
// from the Job's Events only; each index numbers its own.
func TestNormalizeIndexedJobPodsInEvents(t *testing.T) {
	ev := func(i int, reason, msg string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: v1, kind: Event, metadata: {name: e`+itoa(i)+`, namespace: ns},
  involvedObject: {kind: Job, namespace: ns, name: shard},
  source: {component: job-controller}, type: Normal, reason: `+reason+`, message: "`+msg+`", count: 1, firstTimestamp: "2026-01-01T00:00:01Z"}`)
	}
	events := func(a, b string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			ev(1, "SuccessfulCreate", "Created pod: "+a),
			ev(2, "SuccessfulCreate", "Created pod: "+b),
			ev(3, "SuccessfulDelete", "Deleted pod: "+b),
		}
	}
	first := normalize(t, nil, &Capture{Events: events("shard-0-xk2p9", "shard-12-bq5zz"), EventCounts: true})
	second := normalize(t, nil, &Capture{Events: events("shard-0-w2w2w", "shard-12-zzzzz"), EventCounts: true})
	if d := UnifiedDiff("first", "second", first, second); d != "" {
		t.Errorf("the same history with other random names differs:\n%s", d)
	}
	for _, w := range []string{"message: 'Created pod: shard-0-<1>'", "message: 'Deleted pod: shard-12-<1>'"} {
		if !containsLine(first, w) {
			t.Errorf("missing %q in:\n%s", w, first)
		}
	}
}
