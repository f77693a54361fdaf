package chaos

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestCount reads a made-up run dir: creates and deletes by resource with
// Events, Leases and subresources left out, 429s, relists inside the
// fault's window only, panics and the last settle.
func TestCount(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	write := func(name, text string) { writeTestFile(t, dir, name, text) }
	write("chaos-fault.json", `{"Fault": "throttle", "Start": "2026-12-06T03:00:10Z", "End": "2026-12-06T03:00:20Z", "Figures": {"apf-rejected": 2}}`)
	ev := func(id, verb, res, sub, group, uri string, code int, at time.Duration) string {
		return `{"auditID":"` + id + `","stage":"ResponseComplete","verb":"` + verb + `","requestURI":"` + uri +
			`","objectRef":{"resource":"` + res + `","subresource":"` + sub + `","apiGroup":"` + group +
			`"},"responseStatus":{"code":` + strconv.Itoa(code) + `},"requestReceivedTimestamp":"` + start.Add(at).Format(time.RFC3339Nano) + `"}` + "\n"
	}
	write("audit.log", ev("1", "create", "pods", "", "", "/api/v1/namespaces/a/pods", 201, 5*time.Second)+
		ev("2", "create", "pods", "", "", "/api/v1/namespaces/a/pods", 201, 11*time.Second)+
		ev("3", "create", "pods", "", "", "/api/v1/namespaces/a/pods", 429, 11*time.Second)+
		ev("4", "create", "events", "", "", "/api/v1/namespaces/a/events", 201, 12*time.Second)+
		ev("5", "create", "serviceaccounts", "token", "", "/api/v1/x", 201, 12*time.Second)+
		ev("6", "delete", "replicasets", "", "apps", "/apis/apps/v1/x", 200, 13*time.Second)+
		ev("7", "watch", "pods", "", "", "/api/v1/pods?sendInitialEvents=true&watch=true", 200, 14*time.Second)+
		ev("8", "watch", "pods", "", "", "/api/v1/pods?resourceVersion=5&watch=true", 200, 14*time.Second)+
		ev("9", "list", "pods", "", "", "/api/v1/pods", 200, 30*time.Second))
	write("logs/kube-controller-manager.log", "ok\npanic: boom\nfine\n"+
		`E1206 event.go:365] "Server rejected event (will not retry!)" err="the server has received too many requests"`+"\n"+
		`E1206 event.go:313] "Unable to write event (retry limit exceeded!)"`+"\n")
	write("parity.log", "parity: settled after 3s\nx\nparity: settled after 4.5s\n")
	n, err := Count(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n.Creates["pods"] != 2 || len(n.Creates) != 1 || n.Deletes["apps/replicasets"] != 1 {
		t.Errorf("creates %v deletes %v", n.Creates, n.Deletes)
	}
	if n.Throttled != 1 || n.Relists != 1 || n.Watches != 2 || n.Panics != 1 || n.EventsDropped != 2 || n.Settle != 4500*time.Millisecond {
		t.Errorf("got %+v", n)
	}
	if n.PeakClient != 2 {
		t.Errorf("peak client rate %d, want 2", n.PeakClient)
	}
	if n.PeakRate != 2 || n.MeanRate != 0.7 {
		t.Errorf("rates %v/%v, want 2/0.7", n.PeakRate, n.MeanRate)
	}
	calm := Counts{Creates: map[string]int{"pods": 1}}
	if e := Extra(n, calm); e["pods"] != 1 || len(e) != 1 {
		t.Errorf("extra %v", e)
	}
}

// TestRetries: the last 429 of the audit log, and the 429s whose request
// has not been made again since; zero without a 429.
func TestRetries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	at := time.Date(2026, 12, 7, 18, 45, 0, 0, time.UTC)
	line := func(id, uri string, code int, d time.Duration) string {
		return `{"auditID":"` + id + `","stage":"ResponseComplete","verb":"create","requestURI":"` + uri +
			`","user":{"username":"system:kube-controller-manager"},"userAgent":"kcm/job-controller","responseStatus":{"code":` + strconv.Itoa(code) +
			`},"requestReceivedTimestamp":"` + at.Add(d).Format(time.RFC3339Nano) + `"}` + "\n"
	}
	const pods, events = "/api/v1/namespaces/a/pods", "/api/v1/namespaces/a/events"
	for _, c := range []struct {
		name    string
		log     string
		last    time.Duration // 0: none
		waiting int
	}{
		{"two 429s, neither retried", line("1", pods, 429, time.Second) + line("2", events, 429, 3*time.Second), 3 * time.Second, 2},
		{"one retried", line("1", pods, 429, time.Second) + line("2", events, 429, 3*time.Second) + line("3", pods, 201, 5*time.Second), 3 * time.Second, 1},
		{"a retry answered 429 again", line("1", pods, 429, time.Second) + line("2", pods, 429, 3*time.Second), 3 * time.Second, 1},
		{"all retried", line("1", pods, 429, time.Second) + line("2", pods, 201, 2*time.Second), time.Second, 0},
		{"an earlier request is no retry", line("0", pods, 201, 0) + line("1", pods, 429, time.Second), time.Second, 1},
		{"no 429", line("3", pods, 201, 5*time.Second), 0, 0},
	} {
		if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := readRetries(path)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Time{}
		if c.last > 0 {
			want = at.Add(c.last)
		}
		if !r.last.Equal(want) || r.waiting != c.waiting {
			t.Errorf("%s: last %v waiting %d, want %v and %d", c.name, r.last, r.waiting, want, c.waiting)
		}
	}
}

// writeTestFile writes text to dir/name, making its directories.
func writeTestFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
