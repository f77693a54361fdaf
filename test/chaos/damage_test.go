package chaos

import (
	"reflect"
	"testing"
)

// TestCaptureDamage: objects missing and surplus by masked name, pods
// renumbered are not damage, finalizers the calm run does not keep, and a
// Job's completions and failures beyond or short of the calm run's.
func TestCaptureDamage(t *testing.T) {
	calm := `--- # Job a/work
apiVersion: batch/v1
kind: Job
metadata:
  name: work
status:
  succeeded: 4
  failed: 1
--- # Pod a/work-<1>
kind: Pod
metadata:
  name: work-<1>
--- # Pod a/work-<2>
kind: Pod
metadata:
  name: work-<2>
--- # ConfigMap a/keep
kind: ConfigMap
metadata:
  name: keep
--- # Events
- reason: Completed
`
	faulted := `--- # Job a/work
apiVersion: batch/v1
kind: Job
metadata:
  name: work
status:
  succeeded: 5
--- # Pod a/work-<2>
kind: Pod
metadata:
  finalizers:
  - batch.kubernetes.io/job-tracking
  name: work-<2>
--- # Pod a/work-<3>
kind: Pod
metadata:
  name: work-<3>
--- # Pod a/work-<4>
kind: Pod
metadata:
  name: work-<4>
`
	d, err := CaptureDamage(calm, faulted)
	if err != nil {
		t.Fatal(err)
	}
	want := Damage{
		Missing:        []string{"ConfigMap a/keep"},
		Surplus:        []string{"Pod a/work-<n>"},
		FinalizersLeft: []string{"Pod a/work-<n>: batch.kubernetes.io/job-tracking"},
		Doubled:        1, Lost: 1,
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("damage\n got %+v\nwant %+v", d, want)
	}
	if got := d.String(); got != "missing 1 (ConfigMap a/keep); surplus 1 (Pod a/work-<n>); finalizers left 1 (Pod a/work-<n>: batch.kubernetes.io/job-tracking); completions +1; completions -1" {
		t.Errorf("String() = %q", got)
	}
	if d, err := CaptureDamage(calm, calm); err != nil || !d.None() || d.String() != "-" {
		t.Errorf("calm against itself: %+v %v", d, err)
	}
	if _, err := CaptureDamage(calm, "--- # Pod a/x\nkind: [\n"); err == nil {
		t.Error("a malformed capture gave no error")
	}
}
