package parity

import (
	"strings"
	"testing"
)

// A CronJob's Jobs are named by their minute relative to the CronJob's
// creation, wherever the name appears; the same schedule one minute later
// normalises alike.
func TestNormalizeScheduledJobNames(t *testing.T) {
	capture := func(created string, first int) *Capture {
		job := func(n int) string {
			return `{apiVersion: batch/v1, kind: Job, metadata: {name: every-` + itoa(first+n) + `, namespace: ns,
  creationTimestamp: "2026-01-01T00:00:00Z",
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: every, uid: u1, controller: true}]}}`
		}
		return &Capture{
			Objects: objs(t,
				`{apiVersion: batch/v1, kind: CronJob, metadata: {name: every, namespace: ns, uid: u1, creationTimestamp: "`+created+`"},
  status: {active: [{kind: Job, name: every-`+itoa(first+1)+`, namespace: ns}]}}`,
				job(1),
				`{apiVersion: v1, kind: Pod, metadata: {name: every-`+itoa(first+1)+`-x7k2p, generateName: every-`+itoa(first+1)+`-, namespace: ns,
  creationTimestamp: "2026-01-01T00:00:02Z"}}`),
			Events: objs(t,
				`{apiVersion: v1, kind: Event, metadata: {name: e1, namespace: ns}, involvedObject: {kind: CronJob, name: every, namespace: ns},
  reason: SuccessfulDelete, message: "Deleted job every-`+itoa(first)+`", source: {component: cronjob-controller}}`),
		}
	}
	// 29453760 is 2026-01-01T00:00:00Z in minutes.
	a := normalize(t, nil, capture("2025-12-31T23:58:30Z", 29453759))
	b := normalize(t, nil, capture("2025-12-31T23:59:59Z", 29453760))
	if a != b {
		t.Errorf("differ:\n%s\n---\n%s", a, b)
	}
	for _, want := range []string{"--- # Job ns/every-<minute+2>", "name: every-<minute+2>", "Deleted job every-<minute+1>", "--- # Pod ns/every-<minute+2>-<1>"} {
		if !strings.Contains(a, want) {
			t.Errorf("no %q in\n%s", want, a)
		}
	}
	if strings.Contains(a, "2945") {
		t.Errorf("a minute left in\n%s", a)
	}
}
