package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Phase statuses.
const (
	StatusOK          = "ok"
	StatusTimeout     = "timeout"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusSkipped: not run because something before it did not succeed.
	StatusSkipped = "skipped"
	// StatusNotRunnable: the binary lacks a controller the phase needs.
	StatusNotRunnable = "not-runnable"
)

// Results is everything one invocation measured: results.json.
type Results struct {
	Started     time.Time     `json:"started"`
	Finished    time.Time     `json:"finished"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Host        Host          `json:"host"`
	Config      ConfigSummary `json:"config"`
	Runs        []RunResult   `json:"runs"`
}

// Host describes the machine.
type Host struct {
	CPUs      int    `json:"cpus"`
	Kernel    string `json:"kernel,omitempty"`
	GoVersion string `json:"goVersion"`
}

// ConfigSummary is the Config as recorded in results.json.
type ConfigSummary struct {
	Params      Params        `json:"params"`
	PhaseSets   []string      `json:"phaseSets"`
	Phases      []PhaseInfo   `json:"phases"`
	Binaries    []string      `json:"binaries"`
	QPSSettings []string      `json:"qpsSettings"`
	ExtraArgs   []string      `json:"extraArgs,omitempty"`
	Settle      time.Duration `json:"settle"`
	Force       bool          `json:"force,omitempty"`
}

// PhaseInfo names a phase of a phase set.
type PhaseInfo struct {
	Set         string `json:"set"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// RunResult is one scenario on one binary at one QPS setting.
type RunResult struct {
	QPS           string   `json:"qps"`
	Binary        string   `json:"binary"`
	Scenario      string   `json:"scenario"`
	BinaryPath    string   `json:"binaryPath,omitempty"`
	BinaryVersion string   `json:"binaryVersion,omitempty"`
	ExtraArgs     []string `json:"extraArgs,omitempty"`
	// WorkDir is the cluster's work dir: logs/, audit.log, samples.json.
	WorkDir string `json:"workDir"`
	// Error is set when the run itself failed (cluster start, audit log…).
	Error string `json:"error,omitempty"`
	// Setup covers the cluster start, the Lease, the settle period and the
	// scenario's setup.
	Setup  *PhaseResult  `json:"setup,omitempty"`
	Phases []PhaseResult `json:"phases"`
	// Unattributed counts the controller manager's requests outside every
	// phase and the setup (its shutdown, mostly).
	Unattributed  RequestCounts `json:"unattributed"`
	SamplerErrors int           `json:"samplerErrors,omitempty"`
	// Load averages of the machine before and after (shared machines).
	LoadAvgBefore string `json:"loadAvgBefore,omitempty"`
	LoadAvgAfter  string `json:"loadAvgAfter,omitempty"`
}

// PhaseResult is one phase of a run.
type PhaseResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Missing lists the controllers the binary lacks for this phase.
	Missing     []string      `json:"missing,omitempty"`
	Start       time.Time     `json:"start,omitzero"`
	End         time.Time     `json:"end,omitzero"`
	WallSeconds float64       `json:"wallSeconds"`
	Process     ProcessStats  `json:"process"`
	Requests    RequestCounts `json:"requests"`
	// Figures are the phase's own measurements (e.g. the daemonsets
	// add-nodes phase's node-to-pods latencies), by name.
	Figures map[string]float64 `json:"figures,omitempty"`
}

// measured reports whether a phase ran (fully or until its deadline).
func (p *PhaseResult) measured() bool {
	return p != nil && (p.Status == StatusOK || p.Status == StatusTimeout)
}

// Write writes results.json and results.md into dir.
func (r *Results) Write(dir string) error {
	if err := writeJSON(filepath.Join(dir, "results.json"), r); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "results.md"), r.Markdown())
}

// Run returns the run of a binary, QPS setting and scenario, nil if none.
func (r *Results) Run(qps, binary, scenario string) *RunResult {
	for i := range r.Runs {
		if x := &r.Runs[i]; x.QPS == qps && x.Binary == binary && x.Scenario == scenario {
			return x
		}
	}
	return nil
}

// phase returns a run's phase by name, nil if none.
func (r *RunResult) phase(name string) *PhaseResult {
	if r == nil {
		return nil
	}
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// column is one figure of the table. A cumulative one (time, CPU,
// requests) of a timed-out phase is a lower bound.
type column struct {
	header     string
	value      func(*PhaseResult) float64
	format     string
	cumulative bool
}

func columns() []column {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	return []column{
		{"wall s", func(p *PhaseResult) float64 { return p.WallSeconds }, "%.1f", true},
		{"CPU s", func(p *PhaseResult) float64 { return p.Process.CPUSeconds }, "%.1f", true},
		{"peak RSS MiB", func(p *PhaseResult) float64 { return mib(p.Process.PeakRSSBytes) }, "%.0f", false},
		{"final RSS MiB", func(p *PhaseResult) float64 { return mib(p.Process.FinalRSSBytes) }, "%.0f", false},
		{"API requests", func(p *PhaseResult) float64 { return float64(p.Requests.Total) }, "%.0f", true},
	}
}

// Table renders the main table: one row per QPS setting and phase, each
// figure as "upstream / ours (ours÷upstream)" when both binaries ran, with
// what did not run or finish in the notes.
func (r *Results) Table() string {
	both := len(r.Config.Binaries) == 2
	var b strings.Builder
	hdr := []string{"QPS", "phase"}
	for _, c := range columns() {
		hdr = append(hdr, c.header)
	}
	hdr = append(hdr, "notes")
	row(&b, hdr)
	sep := make([]string, len(hdr))
	for i := range sep {
		sep[i] = "---"
		if i >= 2 && i < len(hdr)-1 {
			sep[i] = "--:"
		}
	}
	row(&b, sep)
	for _, q := range r.Config.QPSSettings {
		for _, pi := range r.Config.Phases {
			cells := []string{q, pi.Name}
			byBinary := map[string]*PhaseResult{}
			var notes []string
			for _, bin := range r.Config.Binaries {
				run := r.Run(q, bin, pi.Set)
				p := run.phase(pi.Name)
				byBinary[bin] = p
				if n := phaseNote(run, p); n != "" {
					notes = append(notes, bin+": "+n)
				}
			}
			for _, c := range columns() {
				if both {
					cells = append(cells, pairCell(byBinary[Upstream], byBinary[Ours], c))
				} else {
					cells = append(cells, valueCell(byBinary[r.Config.Binaries[0]], c))
				}
			}
			cells = append(cells, strings.Join(notes, "; "))
			row(&b, cells)
		}
	}
	return b.String()
}

// TableLegend explains the cells of Table.
func (r *Results) TableLegend() string {
	if len(r.Config.Binaries) == 2 {
		return "Cells: upstream / ours (ours÷upstream); – = not measured; ≥ = the phase timed out: time, CPU and requests up to its deadline."
	}
	return "Cells: " + r.Config.Binaries[0] + " only; – = not measured; ≥ = the phase timed out: time, CPU and requests up to its deadline."
}

func row(b *strings.Builder, cells []string) {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func valueCell(p *PhaseResult, c column) string {
	if !p.measured() {
		return "–"
	}
	s := fmt.Sprintf(c.format, c.value(p))
	if p.Status == StatusTimeout && c.cumulative {
		s = "≥" + s
	}
	return s
}

func pairCell(up, ours *PhaseResult, c column) string {
	s := valueCell(up, c) + " / " + valueCell(ours, c)
	if up.measured() && ours.measured() {
		s += " (" + Ratio(c.value(ours), c.value(up)) + ")"
	}
	return s
}

// Ratio formats a/b as "1.23×", "–" when b is zero.
func Ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// phaseNote says why a phase has no (complete) figures, "" if it has.
func phaseNote(run *RunResult, p *PhaseResult) string {
	switch {
	case run == nil:
		return "not run"
	case p == nil:
		return "no such phase"
	case p.Status == StatusOK:
		return ""
	case p.Status == StatusNotRunnable:
		return p.Detail
	case p.Status == StatusSkipped && run.Error != "":
		return "run failed: " + firstLine(run.Error)
	case p.Status == StatusSkipped && run.Setup != nil && run.Setup.Status != StatusOK:
		return "setup " + run.Setup.Status + ": " + firstLine(run.Setup.Detail)
	case p.Detail != "":
		return p.Status + ": " + firstLine(p.Detail)
	default:
		return p.Status
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const maxLen = 160
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

// Markdown renders results.md: the setup, the main table and, per QPS
// setting and phase, the requests by verb and resource.
func (r *Results) Markdown() string {
	var b strings.Builder
	p := r.Config.Params
	fmt.Fprintf(&b, "# kcm benchmark, %s\n\n", r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Host: %d CPUs, Linux %s, %s. Phase sets: %s. Binaries: %s. QPS settings: %s.\n",
		r.Host.CPUs, r.Host.Kernel, r.Host.GoVersion, strings.Join(r.Config.PhaseSets, ", "),
		strings.Join(r.Config.Binaries, ", "), strings.Join(r.Config.QPSSettings, ", "))
	fmt.Fprintf(&b, "Sizes: %d nodes, %d Deployments × %d replicas, scaled to %d; %d new nodes; idle %v; phase timeout %v.\n",
		p.Nodes, p.Deployments, p.Replicas, p.ScaleTo, p.NewNodes, p.Idle, p.PhaseTimeout)
	if len(r.Config.ExtraArgs) > 0 {
		fmt.Fprintf(&b, "Extra controller manager arguments: `%s`.\n", strings.Join(r.Config.ExtraArgs, " "))
	}
	if r.Interrupted {
		b.WriteString("\n**Interrupted: figures are partial.**\n")
	}
	b.WriteString("\n" + r.TableLegend() + "\n\n")
	b.WriteString(r.Table())

	b.WriteString("\n## Runs\n\n")
	for _, run := range r.Runs {
		where := run.WorkDir
		if where == "" {
			where = "not started"
		}
		fmt.Fprintf(&b, "- %s, qps %s, %s: %s", run.Binary, run.QPS, run.Scenario, where)
		if run.Setup != nil {
			fmt.Fprintf(&b, "; setup %s in %.1fs", run.Setup.Status, run.Setup.WallSeconds)
		}
		if run.LoadAvgBefore != "" {
			fmt.Fprintf(&b, "; load average %s → %s", run.LoadAvgBefore, run.LoadAvgAfter)
		}
		if run.Error != "" {
			fmt.Fprintf(&b, "; **error:** %s", firstLine(run.Error))
		}
		b.WriteString("\n")
		writeFigures(&b, run)
	}

	b.WriteString("\n## Requests by verb and resource\n")
	for _, q := range r.Config.QPSSettings {
		for _, pi := range r.Config.Phases {
			r.writeRequestTable(&b, q, pi)
		}
	}
	return b.String()
}

// writeFigures lists the phases' own figures of a run, one line each.
func writeFigures(b *strings.Builder, run RunResult) {
	for _, p := range run.Phases {
		if len(p.Figures) == 0 {
			continue
		}
		keys := make([]string, 0, len(p.Figures))
		for k := range p.Figures {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %.2f", k, p.Figures[k])
		}
		fmt.Fprintf(b, "  - %s: %s\n", p.Name, strings.Join(parts, ", "))
	}
}

// requestRows is how many verb+resource rows each breakdown shows.
const requestRows = 12

func (r *Results) writeRequestTable(b *strings.Builder, q string, pi PhaseInfo) {
	counts := map[string]map[string]int{}
	sum := map[string]int{}
	for _, bin := range r.Config.Binaries {
		p := r.Run(q, bin, pi.Set).phase(pi.Name)
		if !p.measured() {
			continue
		}
		counts[bin] = p.Requests.ByVerbResource
		for k, v := range p.Requests.ByVerbResource {
			sum[k] += v
		}
	}
	if len(counts) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### qps %s, %s\n\n", q, pi.Name)
	hdr := []string{"verb resource"}
	hdr = append(hdr, r.Config.Binaries...)
	row(b, hdr)
	sep := []string{"---"}
	for range r.Config.Binaries {
		sep = append(sep, "--:")
	}
	row(b, sep)
	top := TopCounts(sum, requestRows)
	for _, kc := range top {
		cells := []string{kc.Key}
		for _, bin := range r.Config.Binaries {
			if m, ok := counts[bin]; ok {
				cells = append(cells, fmt.Sprint(m[kc.Key]))
			} else {
				cells = append(cells, "–")
			}
		}
		row(b, cells)
	}
	if len(sum) > len(top) {
		fmt.Fprintf(b, "\n(%d more kinds in results.json)\n", len(sum)-len(top))
	}
}
