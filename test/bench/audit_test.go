package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// auditLines are Metadata-level audit event as kube-apiserver writes it.
const auditLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench/pods","verb":"create","user":{"username":"system:serviceaccount:kube-system:replicaset-controller","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},"userAgent":"kube-controller-manager/v1.37.1","objectRef":{"resource":"pods","namespace":"bench","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-01-01T00:00:01.000000Z","stageTimestamp":"2026-01-01T00:00:01.010000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseStarted","requestURI":"/apis/apps/v1/replicasets?watch=true","verb":"watch","user":{"username":"system:kube-controller-manager"},"objectRef":{"resource":"replicasets","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:01.500000Z","stageTimestamp":"2026-01-01T00:00:01.510000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/bench/deployments/d/status","verb":"update","user":{"username":"system:serviceaccount:kube-system:deployment-controller"},"objectRef":{"resource":"deployments","namespace":"bench","name":"d","apiGroup":"apps","apiVersion":"v1","subresource":"status"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-01-01T00:00:02.000000Z","stageTimestamp":"2026-01-01T00:00:02.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/apis","verb":"get","user":{"username":"system:kube-controller-manager"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:03.000000Z","stageTimestamp":"2026-01-01T00:00:03.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/apis/apps/v1/replicasets?watch=true","verb":"watch","user":{"username":"system:kube-controller-manager"},"objectRef":{"resource":"replicasets","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:01.500000Z","stageTimestamp":"2026-01-01T00:09:01.510000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a5","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench/pods/p","verb":"delete","user":{"username":"system:serviceaccount:kube-system:generic-garbage-collector"},"objectRef":{"resource":"pods","namespace":"bench","name":"p","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:09.000000Z","stageTimestamp":"2026-01-01T00:00:09.001000Z"}
`

func readTestEvents(t *testing.T) []cluster.AuditEvent {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	events, err := cluster.ReadAuditEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestResourceKey(t *testing.T) {
	events := readTestEvents(t)
	var got []string
	for _, e := range events {
		got = append(got, ResourceKey(e))
	}
	want := []string{"pods", "replicasets.apps", "deployments.apps/status", NonResource, "pods"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestCountByWindow(t *testing.T) {
	events := readTestEvents(t) // a watch's two stages are one request
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	windows := []Window{
		{Name: "create", Start: at(1000), End: at(2000)}, // pods create, the watch
		{Name: "scale", Start: at(2000), End: at(3000)},  // the 409 update; 3.000 belongs to the next
		{Name: "idle", Start: at(3000), End: at(4000)},   // discovery
		{Name: "empty", Start: at(5000), End: at(6000)},
	}
	by, other := CountByWindow(events, windows)

	create := by["create"]
	if create.Total != 2 || create.ByVerb["create"] != 1 || create.ByVerb["watch"] != 1 ||
		create.ByResource["pods"] != 1 || create.ByVerbResource["watch replicasets.apps"] != 1 || create.Failed != 0 {
		t.Errorf("create: %+v", create)
	}
	scale := by["scale"]
	if scale.Total != 1 || scale.ByVerbResource["update deployments.apps/status"] != 1 || scale.Failed != 1 ||
		scale.FailedByVerbResource["update deployments.apps/status 409"] != 1 {
		t.Errorf("scale: %+v", scale)
	}
	if idle := by["idle"]; idle.Total != 1 || idle.ByResource[NonResource] != 1 {
		t.Errorf("idle: %+v", idle)
	}
	if e := by["empty"]; e == nil || e.Total != 0 {
		t.Errorf("empty window: %+v", e)
	}
	if other.Total != 1 || other.ByVerbResource["delete pods"] != 1 {
		t.Errorf("outside every window: %+v", other)
	}
}

func TestTopCounts(t *testing.T) {
	m := map[string]int{"get pods": 3, "list pods": 10, "create pods": 3, "watch nodes": 1}
	got := TopCounts(m, 3)
	want := []KeyCount{{"list pods", 10}, {"create pods", 3}, {"get pods", 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if n := len(TopCounts(m, 0)); n != 4 {
		t.Errorf("all: %d entries", n)
	}
}

// eventAuditLines are Event writes as the audit policy records them, with
// their bodies: a create posted 5 s after its event (named with the
// event's UnixNano in hex, 2026-01-01T00:00:01.5Z), a patch of its count
// 3 s after the repeat it records, a create whose name carries no time,
// and a patch whose body has none.
const eventAuditLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"e1","stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:kube-system:job-controller"},"objectRef":{"resource":"events","namespace":"bench","name":"small-001.1886725247622f00","apiVersion":"v1"},"responseStatus":{"code":201},"requestObject":{"kind":"Event","apiVersion":"v1","metadata":{"name":"small-001.1886725247622f00","namespace":"bench"},"reason":"SuccessfulCreate","firstTimestamp":"2026-01-01T00:00:01Z","lastTimestamp":"2026-01-01T00:00:01Z","count":1,"eventTime":null},"requestReceivedTimestamp":"2026-01-01T00:00:06.500000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"e2","stage":"ResponseComplete","verb":"patch","user":{"username":"system:serviceaccount:kube-system:job-controller"},"objectRef":{"resource":"events","namespace":"bench","name":"small-001.1886725247622f00","apiVersion":"v1"},"responseStatus":{"code":200},"requestObject":{"count":2,"lastTimestamp":"2026-01-01T00:00:03Z","message":"Created pod: small-001-x"},"requestReceivedTimestamp":"2026-01-01T00:00:06.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"e3","stage":"ResponseComplete","verb":"create","user":{"username":"system:kube-controller-manager"},"objectRef":{"resource":"events","namespace":"bench","name":"custom","apiVersion":"v1"},"responseStatus":{"code":201},"requestObject":{"eventTime":"2026-01-01T00:00:04.250000Z","series":null},"requestReceivedTimestamp":"2026-01-01T00:00:05.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"e4","stage":"ResponseComplete","verb":"patch","user":{"username":"system:kube-controller-manager"},"objectRef":{"resource":"events","namespace":"bench","name":"odd","apiVersion":"v1"},"responseStatus":{"code":200},"requestObject":{"lastTimestamp":17},"requestReceivedTimestamp":"2026-01-01T00:00:07.000000Z"}
`

func TestAttributionTimeOfEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(eventAuditLines+auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	events, err := cluster.ReadAuditEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := []time.Time{
		t0.Add(1500 * time.Millisecond), // the create's name
		t0.Add(3 * time.Second),         // the patch's lastTimestamp
		t0.Add(4250 * time.Millisecond), // no time in the name: the body's eventTime
		t0.Add(7 * time.Second),         // an unreadable body: received
		t0.Add(time.Second),             // not an Event: received
	}
	for i, w := range want {
		if got := AttributionTime(events[i]); !got.Equal(w) {
			t.Errorf("event %d (%s %s): attributed to %v, want %v", i, events[i].Verb, events[i].ObjectRef.Name, got, w)
		}
	}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	by, other := CountByWindow(events[:4], []Window{
		{Name: "create", Start: at(0), End: at(4)},
		{Name: "delete", Start: at(4), End: at(6)},
		{Name: "(drain)", Start: at(6), End: at(20)},
	})
	if by["create"].Total != 2 || by["delete"].Total != 1 || by["(drain)"].Total != 1 || other.Total != 0 {
		t.Errorf("create %d, delete %d, drain %d, other %d; want 2, 1, 1, 0", by["create"].Total, by["delete"].Total, by["(drain)"].Total, other.Total)
	}
}
