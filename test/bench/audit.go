package bench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// NonResource is the resource key of requests without an object reference
// (discovery, /version, /healthz…).
const NonResource = "(non-resource)"

// RequestCounts counts API requests by verb and resource.
type RequestCounts struct {
	Total int `json:"total"`
	// ByVerb: get, list, watch, create, update, patch, delete, …
	ByVerb map[string]int `json:"byVerb,omitempty"`
	// ByResource keys are resource[.group][/subresource], e.g. "pods",
	// "replicasets.apps", "deployments.apps/status", "pods/binding".
	ByResource map[string]int `json:"byResource,omitempty"`
	// ByVerbResource keys are "verb resource", e.g. "create pods".
	ByVerbResource map[string]int `json:"byVerbResource,omitempty"`
	// Failed counts responses with a status code of 400 or more (conflicts,
	// not-founds, throttling by the server…); the requests are counted above
	// too. FailedByVerbResource keys are "verb resource code", e.g.
	// "update deployments.apps/status 409".
	Failed               int            `json:"failed"`
	FailedByVerbResource map[string]int `json:"failedByVerbResource,omitempty"`
}

// Add counts one audit event.
func (c *RequestCounts) Add(e cluster.AuditEvent) {
	if c.ByVerb == nil {
		c.ByVerb, c.ByResource, c.ByVerbResource = map[string]int{}, map[string]int{}, map[string]int{}
	}
	r := ResourceKey(e)
	c.Total++
	c.ByVerb[e.Verb]++
	c.ByResource[r]++
	c.ByVerbResource[e.Verb+" "+r]++
	if e.ResponseStatus != nil && e.ResponseStatus.Code >= 400 {
		if c.FailedByVerbResource == nil {
			c.FailedByVerbResource = map[string]int{}
		}
		c.Failed++
		c.FailedByVerbResource[fmt.Sprintf("%s %s %d", e.Verb, r, e.ResponseStatus.Code)]++
	}
}

// ResourceKey names the resource of an audit event: resource, then .group
// for non-core groups, then /subresource; NonResource if it has none.
func ResourceKey(e cluster.AuditEvent) string {
	o := e.ObjectRef
	if o == nil || o.Resource == "" {
		return NonResource
	}
	k := o.Resource
	if o.APIGroup != "" {
		k += "." + o.APIGroup
	}
	if o.Subresource != "" {
		k += "/" + o.Subresource
	}
	return k
}

// Window is a named time interval [Start, End).
type Window struct {
	Name       string
	Start, End time.Time
}

// Contains reports whether t falls in [Start, End).
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Start) && t.Before(w.End)
}

// eventSkew bounds how long before its request the event an Event write
// records may have occurred for AttributionTime to believe it.
const eventSkew = time.Hour

// AttributionTime is when the work behind a request happened, which decides
// its window: for a write of an Event, when the event it records occurred,
// because controllers post Events asynchronously through their
// rate-limited clients, often in a later phase than the work they describe
// (a create: the name's timestamp, which client-go's recorders write as
// <object>.<UnixNano in hex>, else the body's times; a patch or update: the
// latest time in its body, lastTimestamp, eventTime or the series'
// lastObservedTime; an aggregated Event's times are when client-go's
// recorder processed it, which this cannot see past); for every other
// request, or when those times are missing or implausible, when the
// apiserver received it.
func AttributionTime(e cluster.AuditEvent) time.Time {
	received := e.RequestReceivedTimestamp
	o := e.ObjectRef
	if o == nil || o.Resource != "events" || (o.APIGroup != "" && o.APIGroup != "events.k8s.io") || o.Subresource != "" {
		return received
	}
	plausible := func(t time.Time) bool {
		return !t.IsZero() && !t.After(received) && received.Sub(t) <= eventSkew
	}
	switch e.Verb {
	case "create":
		if i := strings.LastIndexByte(o.Name, '.'); i >= 0 {
			if n, err := strconv.ParseInt(o.Name[i+1:], 16, 64); err == nil {
				if t := time.Unix(0, n); plausible(t) {
					return t
				}
			}
		}
	case "patch", "update":
	default:
		return received
	}
	if t := e.RequestObject.Latest(); plausible(t) {
		return t
	}
	return received
}

// CountByWindow attributes each event to the first window containing its
// AttributionTime and counts it there. Events in no window are counted in
// other. Every window gets an entry, if only an empty one.
func CountByWindow(events []cluster.AuditEvent, windows []Window) (byWindow map[string]*RequestCounts, other RequestCounts) {
	byWindow = make(map[string]*RequestCounts, len(windows))
	for _, w := range windows {
		if byWindow[w.Name] == nil {
			byWindow[w.Name] = &RequestCounts{}
		}
	}
	for _, e := range events {
		at := AttributionTime(e)
		counted := false
		for _, w := range windows {
			if w.Contains(at) {
				byWindow[w.Name].Add(e)
				counted = true
				break
			}
		}
		if !counted {
			other.Add(e)
		}
	}
	return byWindow, other
}

// KeyCount is one entry of a count map.
type KeyCount struct {
	Key   string
	Count int
}

// TopCounts returns the n largest entries of m, largest first, ties by key;
// n <= 0 means all.
func TopCounts(m map[string]int, n int) []KeyCount {
	out := make([]KeyCount, 0, len(m))
	for k, v := range m {
		out = append(out, KeyCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
