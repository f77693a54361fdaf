package parity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fakeRegistry map[string]bool // canonical name → implemented

func (f fakeRegistry) Canonical(name string) (string, bool) {
	if name == "sa" {
		name = "serviceaccount-controller"
	}
	_, ok := f[name]
	return name, ok
}
func (f fakeRegistry) Implemented(name string) bool { return f[name] }

func TestMissingAndStaleBinary(t *testing.T) {
	reg := fakeRegistry{"serviceaccount-controller": true, "node-lifecycle-controller": false}
	s := &Scenario{Requires: []string{"sa", "node-lifecycle-controller"}}
	got, err := missing(reg, s)
	if err != nil || strings.Join(got, ",") != "node-lifecycle-controller" {
		t.Errorf("missing: %v, %v", got, err)
	}
	if _, err := missing(reg, &Scenario{Requires: []string{"nodelifecycle-typo"}}); err == nil {
		t.Error("an unknown controller is not an error")
	}

	log := filepath.Join(t.TempDir(), "kcm.log")
	line := `I0101 00:00:00.000000 1 run.go:72] "Enabled controllers that kcm does not implement yet; they will not run" controllers=["deployment-controller","serviceaccount-controller"]` + "\n"
	if err := os.WriteFile(log, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := staleBinary(log, reg, &Scenario{Requires: []string{"sa"}}); err == nil {
		t.Error("a binary that lacks a required controller is not reported")
	}
	// Not implemented in the registry either: run with RunUnimplemented, not stale.
	if err := os.WriteFile(log, []byte(strings.ReplaceAll(line, "deployment-controller", "node-lifecycle-controller")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := staleBinary(log, reg, &Scenario{Requires: []string{"node-lifecycle-controller"}}); err != nil {
		t.Errorf("unexpected: %v", err)
	}
}

func TestSummary(t *testing.T) {
	sc := func(n string) *Scenario { return &Scenario{Name: n} }
	results := []Result{
		{Scenario: sc("a"), Status: StatusPass},
		{Scenario: sc("b"), Status: StatusDiff, Diff: "--- upstream\n+++ kcm\n"},
		{Scenario: sc("c"), Status: StatusSkip, Missing: []string{"node-lifecycle-controller"}},
		{Scenario: sc("d"), Status: StatusError, Reason: "upstream: boom"},
	}
	got := Summary(results)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 2 failed" {
		t.Errorf("last line %q, want %q", last, "1 passed, 2 failed")
	}
	for _, w := range []string{"skipped c (needs node-lifecycle-controller)", "coverage: 3 of 4 scenarios run, 1 skipped"} {
		if !strings.Contains(got, w) {
			t.Errorf("summary lacks %q:\n%s", w, got)
		}
	}
	if r := results[1].Report(); !strings.HasPrefix(r, "DIFF  b\n--- upstream\n") {
		t.Errorf("DIFF report:\n%s", r)
	}
}
