package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event (Metadata level) that
// request accounting needs.
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	// RequestObject holds, of a request recorded with its body (Event
	// writes, see auditPolicy), the times an Event carries; nil otherwise.
	RequestObject *EventTimes `json:"requestObject,omitempty"`
}

// EventTimes are the times of an Event (core/v1 or events.k8s.io/v1) or of
// a patch to one; absent ones are zero.
type EventTimes struct {
	LastTimestamp time.Time `json:"lastTimestamp"`
	EventTime     time.Time `json:"eventTime"`
	Series        *struct {
		LastObservedTime time.Time `json:"lastObservedTime"`
	} `json:"series"`
}

// UnmarshalJSON reads the times and leaves any it cannot read zero: a body
// of an unexpected shape must not fail the whole audit log.
func (t *EventTimes) UnmarshalJSON(b []byte) error {
	type plain EventTimes
	var p plain
	if err := json.Unmarshal(b, &p); err == nil {
		*t = EventTimes(p)
	}
	return nil
}

// Latest returns the latest of the times, zero if none is set.
func (t *EventTimes) Latest() time.Time {
	if t == nil {
		return time.Time{}
	}
	latest := t.LastTimestamp
	if t.EventTime.After(latest) {
		latest = t.EventTime
	}
	if t.Series != nil && t.Series.LastObservedTime.After(latest) {
		latest = t.Series.LastObservedTime
	}
	return latest
}

// ReadAuditEvents reads a JSON audit log and returns one event per request:
// long-running requests (watches) log ResponseStarted and ResponseComplete
// under one auditID, and only the last one read is kept. Order is that of
// each request's first line.
func ReadAuditEvents(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: audit log: %w", err)
	}
	defer f.Close()
	var events []AuditEvent
	index := map[string]int{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; s.Scan(); line++ {
		if len(s.Bytes()) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("cluster: audit log %s line %d: %w", path, line, err)
		}
		if i, ok := index[e.AuditID]; ok {
			events[i] = e
			continue
		}
		index[e.AuditID] = len(events)
		events = append(events, e)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("cluster: audit log %s: %w", path, err)
	}
	return events, nil
}
