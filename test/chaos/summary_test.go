package chaos

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kcm-dev/kcm/test/parity"
)

// TestSubjects: the helpers that make kwok's nodes usable are credited
// only when a scenario lists one first or needs nothing else; aliases
// become canonical names.
func TestSubjects(t *testing.T) {
	for _, tc := range []struct {
		requires []string
		want     string
	}{
		{[]string{"job-controller", "node-lifecycle-controller", "node-ipam-controller"}, "job-controller"},
		{[]string{"node-lifecycle-controller"}, "node-lifecycle-controller"},
		{[]string{"node-lifecycle-controller", "taint-eviction-controller", "node-ipam-controller"}, "node-lifecycle-controller taint-eviction-controller"},
		{[]string{"deployment", "replicaset"}, "deployment-controller replicaset-controller"},
	} {
		if got := strings.Join(subjects(&parity.Scenario{Requires: tc.requires}), " "); got != tc.want {
			t.Errorf("subjects(%v) = %q, want %q", tc.requires, got, tc.want)
		}
	}
}

// TestLoadAndSummary writes what a Run leaves for two scenarios under one
// fault (one kcm run whose end state lost a pod and kept a finalizer, one
// that passed, each with upstream's control), reads it back with Load and
// sums it up per controller.
func TestLoadAndSummary(t *testing.T) {
	out := t.TempDir()
	write := func(name, text string) { writeTestFile(t, out, name, text) }
	audit := func(creates int) string {
		var b strings.Builder
		for i := range creates {
			b.WriteString(`{"auditID":"` + strconv.Itoa(i) + `","stage":"ResponseComplete","verb":"create","objectRef":{"resource":"pods"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-07T20:00:00Z"}` + "\n")
		}
		return b.String()
	}
	pods := "--- # Pod a/web-<1>\nkind: Pod\n--- # Pod a/web-<2>\nkind: Pod\n"
	run := func(scenario, label string, creates int, capture, log string) {
		dir := filepath.Join("crash-steps", scenario)
		write(filepath.Join(dir, label, "audit.log"), audit(creates))
		write(filepath.Join(dir, label, "logs", "kube-controller-manager.log"), log)
		write(filepath.Join(dir, label, "parity.log"), "parity: settled after 3.2s\n")
		write(filepath.Join(dir, label+".yaml"), capture)
	}
	run("rs", "upstream", 2, pods, "ok\n")
	run("rs", "kcm", 3, "--- # Pod a/web-<1>\nkind: Pod\nmetadata:\n  finalizers: [x]\n", "panic: boom\n")
	run("rs", "upstream-fault", 2, pods, "ok\n")
	write("crash-steps/rs/diff.txt", "-a\n+b\n")
	write("crash-steps/rs/control-diff.txt", "")
	run("job", "upstream", 2, pods, "ok\n")
	run("job", "kcm", 2, pods, "ok\n")
	run("job", "upstream-fault", 2, pods, "ok\n")
	write("crash-steps/job/control-diff.txt", "")

	scenarios := []*parity.Scenario{
		{Name: "rs", Requires: []string{"replicaset-controller", "node-lifecycle-controller"}},
		{Name: "job", Requires: []string{"job-controller", "replicaset-controller"}},
	}
	outcomes, err := Load(out, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 2 {
		t.Fatalf("%d outcomes", len(outcomes))
	}
	for _, o := range outcomes {
		if o.CountErr != nil {
			t.Fatalf("%s: %v", o.Result.Scenario.Name, o.CountErr)
		}
		failed := o.Result.Scenario.Name == "rs"
		if o.Failed() != failed {
			t.Errorf("%s: Failed() = %v (status %s)", o.Result.Scenario.Name, o.Failed(), o.Result.Status)
		}
	}
	got := Summary(outcomes)
	for _, want := range []string{
		"| crash-steps | job-controller | 1 | 1/1 / 1/1 | 0 / 0 | 0 / 0 | 0 / 0 | +0/−0 / +0/−0 | 0 / 0 |",
		"| crash-steps | replicaset-controller | 2 | 1/2 / 2/2 | 1 / 0 | 1 / 0 | 1 / 0 | +0/−0 / +0/−0 | 1 / 0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "node-lifecycle-controller") {
		t.Errorf("a helper was credited:\n%s", got)
	}
	if _, err := Load(out, scenarios[:1]); err == nil {
		t.Error("Load knew a scenario it was not given")
	}
}
