package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCountWrites(t *testing.T) {
	from := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	line := func(id, user, verb, resource, sub, ns, name string, at time.Duration, code int) string {
		return `{"auditID":"` + id + `","stage":"ResponseComplete","verb":"` + verb + `","user":{"username":"` + user + `"},` +
			`"objectRef":{"resource":"` + resource + `","subresource":"` + sub + `","namespace":"` + ns + `","name":"` + name + `"},` +
			`"responseStatus":{"code":` + strconv.Itoa(code) + `},` +
			`"requestReceivedTimestamp":"` + from.Add(at).Format(time.RFC3339Nano) + `"}`
	}
	kcm := "system:kube-controller-manager"
	rs := "system:serviceaccount:kube-system:replicaset-controller"
	log := strings.Join([]string{
		line("1", rs, "create", "pods", "", "a", "p", time.Second, 201),
		line("2", rs, "update", "replicasets", "status", "a", "r", 2*time.Second, 200),
		line("3", kcm, "update", "leases", "", "kube-system", "kube-controller-manager", 3*time.Second, 200),
		line("4", rs, "create", "events", "", "a", "e", 4*time.Second, 201),
		line("5", kcm, "create", "tokenreviews", "", "", "", 5*time.Second, 201),
		line("6", "system:serviceaccount:kube-system:kube-proxy", "patch", "nodes", "", "", "n", 6*time.Second, 200),
		line("7", rs, "patch", "pods", "", "a", "p", 7*time.Second, 200),
		line("8", rs, "update", "replicasets", "status", "a", "r", 8*time.Second, 409), // refused
		line("9", rs, "delete", "pods", "", "a", "p", -time.Second, 200),               // before the window
		line("10", rs, "delete", "pods", "", "a", "p", 3*time.Minute, 200),             // after it
		line("11", "system:serviceaccount:kube-system:statefulset-controller", "delete", "pods", "", "a", "q", 9*time.Second, 200),
		line("12", "system:serviceaccount:kube-system:namespace-controller", "deletecollection", "pods", "", "gone", "", 10*time.Second, 200),
		line("15", "system:serviceaccount:kube-system:namespace-controller", "deletecollection", "events", "", "gone", "", 10*time.Second, 200),
		line("13", kcm, "create", "serviceaccounts", "token", "kube-system", "job-controller", 11*time.Second, 201),
	}, "\n") + "\n" + `{"auditID":"14","verb":"cre` // half a line being written
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := countWrites(p, from, from.Add(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.created, ","); got != "pods a/p" {
		t.Errorf("creates %s", got)
	}
	if got := list(w.deletes); got != "pods 1" {
		t.Errorf("deletes %s", got)
	}
	if got := list(w.spec); got != "pods 1" {
		t.Errorf("spec writes %s", got)
	}
	if got := list(w.status); got != "replicasets/status 1" {
		t.Errorf("status writes %s", got)
	}
	if w.events != 1 || w.lease != 1 || w.swept != 2 || w.tokens != 1 {
		t.Errorf("events %d, lease %d, swept %d, tokens %d: want 1, 1, 2, 1", w.events, w.lease, w.swept, w.tokens)
	}
}
