package bench

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScaleCurve: two sizes' scale runs give a row per phase, binary and
// size with costs per 1,000 pods (30 per node) and nodes, and an "all" row
// summing the phases; phases that did not run and other phase sets are
// left out. ReadResults reads back results.json.
func TestScaleCurve(t *testing.T) {
	run := func(binary string, cpu float64, reqs int, rss int64) RunResult {
		return RunResult{QPS: "100", Binary: binary, Scenario: ScenarioScale, Phases: []PhaseResult{
			{Name: "join", Status: StatusOK, Process: ProcessStats{CPUSeconds: cpu, PeakRSSBytes: rss}, Requests: RequestCounts{Total: reqs}},
			{Name: "fill", Status: StatusOK, Process: ProcessStats{CPUSeconds: 3 * cpu, PeakRSSBytes: 2 * rss}, Requests: RequestCounts{Total: 3 * reqs}},
			{Name: "roll", Status: StatusSkipped, Process: ProcessStats{CPUSeconds: 100}},
		}}
	}
	small := &Results{Config: ConfigSummary{Params: Params{ScaleNodes: 500}}, Runs: []RunResult{
		run(Upstream, 15, 3000, 150<<20), run(Ours, 7.5, 1500, 75<<20),
		{QPS: "100", Binary: Ours, Scenario: ScenarioDeployments, Phases: []PhaseResult{{Name: "create", Status: StatusOK}}},
	}}
	big := &Results{Config: ConfigSummary{Params: Params{ScaleNodes: 2000}}, Runs: []RunResult{run(Ours, 60, 6000, 300<<20)}}
	dir := t.TempDir()
	if err := writeJSON(filepath.Join(dir, "results.json"), big); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := ScaleCurve([]*Results{small, back})
	for _, want := range []string{
		"| 100 | join | upstream | 500 | 15000 | 1.00 | 200 | 6000 | 10.0 |",
		"| 100 | join | ours | 500 | 15000 | 0.50 | 100 | 3000 | 5.0 |",
		"| 100 | join | ours | 2000 | 60000 | 1.00 | 100 | 3000 | 5.0 |",
		"| 100 | all | ours | 2000 | 60000 | 4.00 | 400 | 12000 | 10.0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("curve lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "roll") || strings.Contains(got, "create") {
		t.Errorf("a phase that did not run, or another phase set, is in the curve:\n%s", got)
	}
	if strings.Index(got, "| join | upstream | 500") > strings.Index(got, "| join | ours | 500") {
		t.Errorf("upstream's rows should come first:\n%s", got)
	}
}
