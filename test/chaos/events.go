package chaos

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Events are the one part of a capture a fault may take away without a
// controller being wrong. client-go's event recorder (upstream's and kcm's)
// gives up on an Event the apiserver rejects: after the rest client's own
// retries of a 429 it logs "Server rejected event (will not retry!)", and
// after its 12 tries of a failing connection "Unable to write event (retry
// limit exceeded!)". Upstream sheds Events under load on purpose, and kcm
// keeps that: an Event is worth less than the request of a controller
// waiting behind it. So a faulted run whose capture lacks Events the calm
// run has is explained when its log says at least as many were dropped.

// droppedEventLines are the recorder's log lines for an Event given up on.
var droppedEventLines = []string{"Server rejected event", "Unable to write event (retry limit exceeded!)"}

const eventsMarker = "--- # Events\n"

// placeholderRE matches parity's numbered generated names (web-<hash>-<3>):
// the numbering follows every name a capture knows, Events included, so a
// lost Event that was the only mention of a deleted pod renumbers the rest.
var placeholderRE = regexp.MustCompile(`<\d+>`)

// EventLoss compares a faulted run's normalised capture with the calm
// run's. ok says the only difference is Events missing from the faulted
// one: the objects are the same (up to the numbering of generated names)
// and the faulted run's Events, counted with their counts, are a
// sub-multiset of the calm run's. lost is how many are missing.
func EventLoss(calm, faulted string) (lost int, ok bool, err error) {
	calmObjs, calmEvents := splitEvents(calm)
	objs, events := splitEvents(faulted)
	if mask(calmObjs) != mask(objs) {
		return 0, false, nil
	}
	want, err := eventCounts(calmEvents)
	if err != nil {
		return 0, false, fmt.Errorf("calm run: %w", err)
	}
	got, err := eventCounts(events)
	if err != nil {
		return 0, false, fmt.Errorf("faulted run: %w", err)
	}
	for k, n := range got {
		if n > want[k] {
			return 0, false, nil
		}
	}
	for k, n := range want {
		lost += n - got[k]
	}
	return lost, true, nil
}

func splitEvents(text string) (objects, events string) {
	if strings.HasPrefix(text, eventsMarker) {
		return "", text[len(eventsMarker):]
	}
	if i := strings.Index(text, "\n"+eventsMarker); i >= 0 {
		return text[:i+1], text[i+1+len(eventsMarker):]
	}
	return text, ""
}

func mask(s string) string { return placeholderRE.ReplaceAllString(s, "<n>") }

// eventCounts reads parity's Events list as a multiset: each Event (its
// fields but count, placeholders masked) with its count (1 without one).
func eventCounts(text string) (map[string]int, error) {
	var list []map[string]any
	if err := yaml.Unmarshal([]byte(text), &list); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range list {
		n := 1
		if c, ok := e["count"].(float64); ok {
			n = int(c)
		}
		delete(e, "count")
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%v\x00", k, e[k])
		}
		out[mask(b.String())] += n
	}
	return out, nil
}
