package chaos

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// Counts are the figures of one run (one cluster) of a scenario, from its
// work dir: the controller manager's requests as the apiserver audited
// them (test/cluster's audit policy records every request of
// system:kube-controller-manager and of kube-system's ServiceAccounts, and
// only those), its log and parity's log.
type Counts struct {
	// Creates and Deletes count the successful (2xx) creates and deletes
	// by resource (group/resource, core without a group), leaving out
	// Events, Leases, subresources (serviceaccounts/token) and the review
	// APIs, whose numbers follow timing and are no object's life.
	Creates, Deletes map[string]int
	// Requests is every audited request; Throttled those answered 429.
	Requests, Throttled int
	// During the fault (the whole run when calm): Relists are LISTs and
	// watches asking for the initial state (sendInitialEvents, client-go's
	// streaming list, which replaces the LIST): after the start, an
	// informer lists only when its watch cannot resume (410 Gone). Watches
	// are watch requests, each ended watch resumed adds one. PeakRate is
	// the most requests received in one second, MeanRate requests per
	// second.
	Relists, Watches   int
	PeakRate, MeanRate float64
	// PeakClient is the most requests one client made in one second
	// during the fault, and PeakClientUser that client (clientOf). A
	// client's token bucket (20/30 by default) keeps it near its burst
	// plus its QPS; a hot loop around the limiter would show far above.
	// Upstream's shared-informers client reaches 59 when its informers
	// start; a killed process and its successor add up.
	PeakClient     int
	PeakClientUser string
	// Panics are the lines of the controller manager's log that mention a
	// panic.
	Panics int
	// EventsDropped are the Events its log says the event recorder gave up
	// on (events.go).
	EventsDropped int
	// Settle is how long parity's final settle took after the fault
	// ended: the time to converge (0 if the log does not say).
	Settle time.Duration
	// Fault is the run's fault record, if it had one.
	Fault *Record
}

// processEnded says the controller manager's process ended during the
// fault (killed, or exited on a lost Lease and started again): the Events
// its recorder had queued but not yet written went with it, upstream's as
// well as kcm's, and no log line says how many.
func (n Counts) processEnded() bool {
	return n.Fault != nil && (n.Fault.Figures["kills"] > 0 || n.Fault.Figures["kcm-restarted"] > 0)
}

// ignoredCreates are resources whose creates Counts leaves out.
var ignoredCreates = map[string]bool{
	"events": true, "events.k8s.io/events": true, "coordination.k8s.io/leases": true,
	"authentication.k8s.io/tokenreviews": true, "authorization.k8s.io/subjectaccessreviews": true,
}

// Count reads the figures of the run whose cluster work dir is runDir.
func Count(runDir string) (Counts, error) {
	n := Counts{Creates: map[string]int{}, Deletes: map[string]int{}}
	rec, ok, err := ReadRecord(runDir)
	if err != nil {
		return n, err
	}
	if ok {
		n.Fault = &rec
	}
	events, err := cluster.ReadAuditEvents(filepath.Join(runDir, "audit.log"))
	if err != nil {
		return n, err
	}
	var from, to time.Time
	if n.Fault != nil {
		from, to = n.Fault.Start, n.Fault.End
	} else if len(events) > 0 {
		from, to = events[0].RequestReceivedTimestamp, events[len(events)-1].RequestReceivedTimestamp
	}
	perSecond := map[int64]int{}
	type userSecond struct {
		user string
		sec  int64
	}
	perUser := map[userSecond]int{}
	inWindow := 0
	for _, e := range events {
		n.Requests++
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		if code == 429 {
			n.Throttled++
		}
		t := e.RequestReceivedTimestamp
		if !t.Before(from) && !t.After(to) {
			inWindow++
			perSecond[t.Unix()]++
			perUser[userSecond{clientOf(e), t.Unix()}]++
			switch {
			case e.Verb == "list":
				n.Relists++
			case e.Verb == "watch":
				n.Watches++
				if strings.Contains(e.RequestURI, "sendInitialEvents=true") {
					n.Relists++
				}
			}
		}
		if e.ObjectRef == nil || e.ObjectRef.Subresource != "" || code < 200 || code > 299 {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.APIGroup != "" {
			res = e.ObjectRef.APIGroup + "/" + res
		}
		switch {
		case ignoredCreates[res]:
		case e.Verb == "create":
			n.Creates[res]++
		case e.Verb == "delete":
			n.Deletes[res]++
		}
	}
	for _, c := range perSecond {
		n.PeakRate = max(n.PeakRate, float64(c))
	}
	for k, c := range perUser {
		if c > n.PeakClient || (c == n.PeakClient && k.user < n.PeakClientUser) {
			n.PeakClient, n.PeakClientUser = c, k.user
		}
	}
	if secs := to.Sub(from).Seconds(); secs > 0 {
		n.MeanRate = float64(inWindow) / secs
	}
	log := filepath.Join(runDir, "logs", string(cluster.ControllerManager)+".log")
	if n.Panics, err = countLines(log, "panic"); err != nil {
		return n, err
	}
	if n.EventsDropped, err = countLines(log, droppedEventLines...); err != nil {
		return n, err
	}
	n.Settle, err = lastSettle(filepath.Join(runDir, "parity.log"))
	return n, err
}

// clientOf names the client that made a request: both binaries' client
// builders end the user agent with the client's name
// (".../shared-informers", ".../system:serviceaccount:kube-system:
// job-controller"); a request without one is known by its user.
func clientOf(e cluster.AuditEvent) string {
	if i := strings.LastIndexByte(e.UserAgent, '/'); i >= 0 && i < len(e.UserAgent)-1 {
		return e.UserAgent[i+1:]
	}
	return e.User.Username
}

// countLines counts the lines of a file containing any of subs.
func countLines(path string, subs ...string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("chaos: %w", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		for _, s := range subs {
			if strings.Contains(sc.Text(), s) {
				n++
				break
			}
		}
	}
	return n, sc.Err()
}

// lastSettle is the duration of the last "parity: settled after" line of
// parity's log: the settle before the capture.
func lastSettle(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("chaos: %w", err)
	}
	const marker = "parity: settled after "
	i := strings.LastIndex(string(b), marker)
	if i < 0 {
		return 0, nil
	}
	rest := string(b[i+len(marker):])
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	d, err := time.ParseDuration(strings.TrimSpace(rest))
	if err != nil {
		return 0, fmt.Errorf("chaos: %s: %w", path, err)
	}
	return d, nil
}

// Extra are the creates of a beyond those of calm, per resource: objects
// created more often than upstream's calm run created them (duplicates,
// or replacements of objects lost).
func Extra(a, calm Counts) map[string]int {
	extra := map[string]int{}
	for res, n := range a.Creates {
		if d := n - calm.Creates[res]; d > 0 {
			extra[res] = d
		}
	}
	return extra
}

// short formats a per-resource map as "pods=3 apps/replicasets=1", "-" if
// empty.
func short(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "apps/"), m[k]))
	}
	return strings.Join(parts, " ")
}
