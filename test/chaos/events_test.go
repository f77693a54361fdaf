package chaos

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kcm-dev/kcm/test/parity"
)

const calmCapture = `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
--- # Events
- message: Scaled up replica set web-<hash> from 0 to 3
  object: Deployment a/web
  reason: ScalingReplicaSet
  type: Normal
- message: 'Created pod: web-<hash>-<1>'
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulCreate
  type: Normal
- message: 'Created pod: web-<hash>-<2>'
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulCreate
  type: Normal
- message: 'Deleted pod: web-<hash>-<1>'
  count: 2
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulDelete
  type: Normal
`

// TestEventLoss: a faulted capture that only lacks Events (even when the
// loss renumbers the generated names) is explained, with how many are
// missing; one with an Event the calm run lacks, or different objects, is
// not.
func TestEventLoss(t *testing.T) {
	for _, tc := range []struct {
		name, faulted string
		lost          int
		ok            bool
	}{
		{"same", calmCapture, 0, true},
		{"lost and renumbered", `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<1>
metadata:
  name: web-<hash>-<1>
--- # Events
- message: 'Created pod: web-<hash>-<1>'
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulCreate
  type: Normal
- message: 'Deleted pod: web-<hash>-<1>'
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulDelete
  type: Normal
`, 3, true},
		{"no Events at all", `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
`, 5, true},
		{"an Event the calm run lacks", calmCapture + `- message: 'Error creating: forbidden'
  object: ReplicaSet a/web-<hash>
  reason: FailedCreate
  type: Warning
`, 0, false},
		{"more of an Event", `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
--- # Events
- message: 'Deleted pod: web-<hash>-<1>'
  count: 3
  object: ReplicaSet a/web-<hash>
  reason: SuccessfulDelete
  type: Normal
`, 0, false},
		{"objects differ", `--- # Deployment a/web
spec:
  replicas: 2
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
`, 0, false},
		{"an extra object", `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
--- # Pod a/web-<hash>-<3>
metadata:
  name: web-<hash>-<3>
`, 0, false},
	} {
		lost, ok, err := EventLoss(calmCapture, tc.faulted)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ok != tc.ok || (ok && lost != tc.lost) {
			t.Errorf("%s: got lost=%d ok=%v, want lost=%d ok=%v", tc.name, lost, ok, tc.lost, tc.ok)
		}
	}
}

// TestOutcomeEventsExplained: a DIFF that is only lost Events passes when
// kcm's log says the recorder dropped as many, or its process was killed
// or restarted during the fault, and fails otherwise.
func TestOutcomeEventsExplained(t *testing.T) {
	dir := t.TempDir()
	lossy := `--- # Deployment a/web
spec:
  replicas: 3
--- # Pod a/web-<hash>-<2>
metadata:
  name: web-<hash>-<2>
--- # Events
- message: Scaled up replica set web-<hash> from 0 to 3
  object: Deployment a/web
  reason: ScalingReplicaSet
  type: Normal
`
	for name, text := range map[string]string{labelCalm: calmCapture, labelKCM: lossy} {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A process killed or restarted during the fault takes its queued
	// Events with it, without a log line.
	ended := func(figure string) *Record { return &Record{Figures: map[string]float64{figure: 1}} }
	for _, tc := range []struct {
		dropped int
		fault   *Record
		failed  bool
	}{{4, nil, false}, {9, nil, false}, {3, nil, true}, {0, ended("kills"), false}, {0, ended("kcm-restarted"), false}, {0, ended("cuts"), true}} {
		o := Outcome{
			Result: parity.Result{Status: parity.StatusDiff, Diff: "-x\n+y\n", Dir: dir},
			Counts: map[string]Counts{labelCalm: {}, labelKCM: {EventsDropped: tc.dropped, Fault: tc.fault}},
		}
		if err := o.explainEvents(); err != nil {
			t.Fatal(err)
		}
		if o.Failed() != tc.failed {
			t.Errorf("dropped %d: Failed() = %v, want %v (lost %v)", tc.dropped, o.Failed(), tc.failed, o.EventsLost)
		}
		if !tc.failed && o.EventsLost[labelKCM] != 4 {
			t.Errorf("dropped %d: lost %v, want 4", tc.dropped, o.EventsLost)
		}
	}
}
