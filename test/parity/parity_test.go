package parity

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestQuickScenarios runs the scenarios marked quick on upstream and on
// kcm, as `make parity` does for all of them, and compares the metric
// families both binaries exposed at their ends. It starts two control planes
// per scenario, so -short skips it. Logs of a failed scenario are kept and
// their directory logged.
func TestQuickScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes per scenario")
	}
	scenarios, err := LoadScenarios("scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.MkdirTemp("", "kcm-parity-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	failed := false
	var results []Result
	for _, s := range Quick(scenarios) {
		t.Run(s.Name, func(t *testing.T) {
			r := Run(ctx, []*Scenario{s}, Options{OutDir: out, Logf: t.Logf})[0]
			results = append(results, r)
			switch {
			case r.Status == StatusSkip:
				t.Skipf("kcm does not implement %v", r.Missing)
			case r.Failed():
				failed = true
				t.Errorf("%s", r.Report())
			}
		})
	}
	// The quick form of the metrics check: the idle scenario's families and
	// the union over the quick scenarios.
	diffs, compared := MetricsReport(results, false)
	for _, d := range diffs {
		t.Errorf("metric families: %s", d)
	}
	if compared == 0 && !failed {
		t.Error("metric families: no scenario compared")
	}
	if failed {
		t.Logf("captures and logs kept in %s", out)
		return
	}
	if err := os.RemoveAll(out); err != nil {
		t.Log(err)
	}
}
