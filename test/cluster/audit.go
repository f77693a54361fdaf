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
