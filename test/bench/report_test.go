package bench

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func phaseOK(name string, wall, cpu float64, peakMiB, finalMiB int64, requests int) PhaseResult {
	return PhaseResult{
		Name: name, Status: StatusOK, WallSeconds: wall,
		Process:  ProcessStats{CPUSeconds: cpu, PeakRSSBytes: peakMiB << 20, FinalRSSBytes: finalMiB << 20},
		Requests: RequestCounts{Total: requests, ByVerbResource: map[string]int{"create pods": requests}},
	}
}

func testResults() *Results {
	return &Results{
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Host:    Host{CPUs: 2, Kernel: "6.1", GoVersion: "go1.26"},
		Config: ConfigSummary{
			Params:      Params{Nodes: 50, Deployments: 300, Replicas: 5, ScaleTo: 10, NewNodes: 100, Idle: time.Minute, PhaseTimeout: 20 * time.Minute},
			PhaseSets:   []string{ScenarioDeployments, ScenarioNodes},
			Phases:      []PhaseInfo{{Set: ScenarioDeployments, Name: "create"}, {Set: ScenarioDeployments, Name: "scale"}, {Set: ScenarioNodes, Name: "nodes"}},
			Binaries:    []string{Upstream, Ours},
			QPSSettings: []string{"default"},
		},
		Runs: []RunResult{
			{QPS: "default", Binary: Upstream, Scenario: ScenarioDeployments, Phases: []PhaseResult{
				phaseOK("create", 40, 10, 200, 150, 1000),
				{Name: "scale", Status: StatusTimeout, Detail: "timed out after 20m0s waiting for x (3/300 done)", WallSeconds: 1200,
					Process: ProcessStats{CPUSeconds: 5}, Requests: RequestCounts{Total: 10}},
			}},
			{QPS: "default", Binary: Ours, Scenario: ScenarioDeployments, Phases: []PhaseResult{
				phaseOK("create", 20, 15, 100, 100, 500),
				{Name: "scale", Status: StatusSkipped, Detail: "after create failed"},
			}},
			{QPS: "default", Binary: Upstream, Scenario: ScenarioNodes, Phases: []PhaseResult{phaseOK("nodes", 28, 3, 90, 90, 1382)}},
			{QPS: "default", Binary: Ours, Scenario: ScenarioNodes, Phases: []PhaseResult{
				{Name: "nodes", Status: StatusNotRunnable, Missing: []string{"node-lifecycle-controller", "node-ipam-controller"},
					Detail: notRunnableDetail([]string{"node-lifecycle-controller", "node-ipam-controller"})},
			}},
		},
	}
}

func TestTable(t *testing.T) {
	got := testResults().Table()
	want := `| QPS | phase | wall s | CPU s | peak RSS MiB | final RSS MiB | API requests | notes |
| --- | --- | --: | --: | --: | --: | --: | --- |
| default | create | 40.0 / 20.0 (0.50×) | 10.0 / 15.0 (1.50×) | 200 / 100 (0.50×) | 150 / 100 (0.67×) | 1000 / 500 (0.50×) |  |
| default | scale | ≥1200.0 / – | ≥5.0 / – | 0 / – | 0 / – | ≥10 / – | upstream: timeout: timed out after 20m0s waiting for x (3/300 done); ours: skipped: after create failed |
| default | nodes | 28.0 / – | 3.0 / – | 90 / – | 90 / – | 1382 / – | ours: not yet runnable: missing node-lifecycle-controller, node-ipam-controller |
`
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableOneBinary(t *testing.T) {
	r := testResults()
	r.Config.Binaries = []string{Upstream}
	got := r.Table()
	if !strings.Contains(got, "| default | create | 40.0 | 10.0 | 200 | 150 | 1000 |  |") {
		t.Errorf("single-binary table:\n%s", got)
	}
	if strings.Contains(got, "ours") {
		t.Errorf("single-binary table mentions ours:\n%s", got)
	}
}

func TestPhaseNote(t *testing.T) {
	p := &PhaseResult{Name: "create", Status: StatusSkipped}
	if got := phaseNote(&RunResult{Error: "cluster start: kube-apiserver exited early\nlast lines"}, p); got != "run failed: cluster start: kube-apiserver exited early" {
		t.Errorf("run error: %q", got)
	}
	setup := &PhaseResult{Status: StatusTimeout, Detail: "timed out after 5m0s waiting for 50 nodes"}
	if got := phaseNote(&RunResult{Setup: setup}, p); got != "setup timeout: timed out after 5m0s waiting for 50 nodes" {
		t.Errorf("setup: %q", got)
	}
	if got := phaseNote(nil, nil); got != "not run" {
		t.Errorf("no run: %q", got)
	}
	if got := phaseNote(&RunResult{}, &PhaseResult{Status: StatusInterrupted}); got != "interrupted" {
		t.Errorf("interrupted: %q", got)
	}
}

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{{3, 2, "1.50×"}, {1, 3, "0.33×"}, {5, 0, "–"}, {0, 4, "0.00×"}} {
		if got := Ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("Ratio(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestMarkdownAndJSON(t *testing.T) {
	r := testResults()
	md := r.Markdown()
	for _, want := range []string{
		"# kcm benchmark, 2026-01-02T03:04:05Z",
		"50 nodes, 300 Deployments × 5 replicas, scaled to 10",
		"Cells: upstream / ours (ours÷upstream)",
		"### qps default, create",
		"| create pods | 1000 | 500 |",
		"### qps default, nodes",
		"| create pods | 1382 | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "### qps default, scale\n\n| verb resource | upstream | ours |\n| --- | --: | --: |\n| create") {
		t.Errorf("a timed-out phase with no breakdown got one")
	}

	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Table() != r.Table() {
		t.Errorf("the table from results.json differs:\n%s\nvs\n%s", back.Table(), r.Table())
	}
	if _, err := os.Stat(filepath.Join(dir, "results.md")); err != nil {
		t.Error(err)
	}
}

func TestRepeatedRunsShowMedians(t *testing.T) {
	run := func(bin string, rep int, p PhaseResult) RunResult {
		return RunResult{QPS: "500", Binary: bin, Scenario: ScenarioJobs, Repetition: rep, Phases: []PhaseResult{p}}
	}
	withFigure := func(p PhaseResult, v float64) PhaseResult {
		p.Figures = map[string]float64{"lag": v}
		return p
	}
	r := &Results{
		Config: ConfigSummary{
			Phases:      []PhaseInfo{{Set: ScenarioJobs, Name: "indexed"}},
			Binaries:    []string{Upstream, Ours},
			QPSSettings: []string{"500"},
			Repeat:      3,
		},
		Runs: []RunResult{
			run(Upstream, 1, withFigure(phaseOK("indexed", 20, 4, 150, 150, 2000), 1)),
			run(Ours, 1, withFigure(phaseOK("indexed", 22, 3.5, 100, 100, 2100), 5)),
			run(Upstream, 2, withFigure(phaseOK("indexed", 19, 3, 152, 150, 2060), 3)),
			run(Ours, 2, PhaseResult{Name: "indexed", Status: StatusFailed, Detail: "create: boom"}),
			run(Upstream, 3, withFigure(phaseOK("indexed", 21, 3.8, 148, 150, 2040), 2)),
			run(Ours, 3, withFigure(phaseOK("indexed", 18, 2.5, 104, 100, 2000), 7)),
		},
	}
	// Upstream: medians of three; ours: of the two that completed.
	want := "| 500 | indexed | 20.0 / 20.0 (1.00×) | 3.8 / 3.0 (0.79×) | 150 / 102 (0.68×) | 150 / 100 (0.67×) | 2040 / 2050 (1.00×) | ours: repetition 2: failed: create: boom |\n"
	if got := r.Table(); !strings.Contains(got, want) {
		t.Errorf("table:\n%s\nwant row:\n%s", got, want)
	}
	if p, _ := r.summaryPhase("500", Ours, r.Config.Phases[0]); p.Figures["lag"] != 6 || p.Requests.ByVerbResource["create pods"] != 2050 {
		t.Errorf("ours' median figures %v, breakdown %v", p.Figures, p.Requests.ByVerbResource)
	}
	reps := r.RepetitionTable()
	for _, want := range []string{
		"| QPS | phase | repetition | wall s |",
		"| 500 | indexed | 1 | 20.0 / 22.0 (1.10×) |",
		"| 500 | indexed | 2 | 19.0 / – |",
		"| 500 | indexed | 3 | 21.0 / 18.0 (0.86×) |",
	} {
		if !strings.Contains(reps, want) {
			t.Errorf("repetition table lacks %q:\n%s", want, reps)
		}
	}
	if md := r.Markdown(); !strings.Contains(md, "median of 3 repetitions") || !strings.Contains(md, "## Repetitions") || !strings.Contains(md, "jobs (repetition 2)") {
		t.Errorf("markdown:\n%s", md)
	}
	r.Config.Repeat = 0
	if r.RepetitionTable() != "" {
		t.Error("a repetition table for runs made once")
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}
