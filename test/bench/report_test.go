package bench

import (
	"encoding/json"
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
