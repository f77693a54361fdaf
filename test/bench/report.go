package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	Params      Params      `json:"params"`
	PhaseSets   []string    `json:"phaseSets"`
	Phases      []PhaseInfo `json:"phases"`
	Binaries    []string    `json:"binaries"`
	QPSSettings []string    `json:"qpsSettings"`
	ExtraArgs   []string    `json:"extraArgs,omitempty"`
	// SchedulerArgs are kube-scheduler's extra arguments.
	SchedulerArgs []string      `json:"schedulerArgs,omitempty"`
	Settle        time.Duration `json:"settle"`
	Drain         time.Duration `json:"drain,omitempty"`
	Force         bool          `json:"force,omitempty"`
	// Repeat is how many times every run was made (absent: once).
	Repeat int `json:"repeat,omitempty"`
}

// PhaseInfo names a phase of a phase set.
type PhaseInfo struct {
	Set         string `json:"set"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// RunResult is one scenario on one binary at one QPS setting.
type RunResult struct {
	QPS      string `json:"qps"`
	Binary   string `json:"binary"`
	Scenario string `json:"scenario"`
	// Repetition numbers the run from 1 when runs were repeated.
	Repetition    int      `json:"repetition,omitempty"`
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
	// Drained counts the requests received in the drain period after the
	// last phase that record no work of a phase (Lease renewals, mostly).
	Drained RequestCounts `json:"drained"`
	// Unattributed counts the controller manager's requests outside every
	// phase, the setup and the drain period (its shutdown, mostly).
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

// Run returns the (first) run of a binary, QPS setting and scenario, nil
// if none.
func (r *Results) Run(qps, binary, scenario string) *RunResult {
	if runs := r.runsOf(qps, binary, scenario); len(runs) > 0 {
		return runs[0]
	}
	return nil
}

// runsOf returns every repetition of a binary's run of a scenario at a QPS
// setting, in run order.
func (r *Results) runsOf(qps, binary, scenario string) []*RunResult {
	var out []*RunResult
	for i := range r.Runs {
		if x := &r.Runs[i]; x.QPS == qps && x.Binary == binary && x.Scenario == scenario {
			out = append(out, x)
		}
	}
	return out
}

// summaryPhase returns what the table shows for a phase of a binary: the
// phase itself when the run was made once, else a phase of the medians of
// the repetitions that completed it (of those that timed out, if none
// did), with a note on each repetition that did not.
func (r *Results) summaryPhase(qps, binary string, pi PhaseInfo) (*PhaseResult, string) {
	runs := r.runsOf(qps, binary, pi.Set)
	if len(runs) <= 1 {
		var run *RunResult
		if len(runs) == 1 {
			run = runs[0]
		}
		p := run.phase(pi.Name)
		return p, phaseNote(run, p)
	}
	var ok, timedOut []*PhaseResult
	var notes []string
	for _, run := range runs {
		p := run.phase(pi.Name)
		switch {
		case p != nil && p.Status == StatusOK:
			ok = append(ok, p)
		case p.measured():
			timedOut = append(timedOut, p)
		}
		if n := phaseNote(run, p); n != "" {
			notes = append(notes, fmt.Sprintf("repetition %d: %s", run.Repetition, n))
		}
	}
	note := strings.Join(notes, "; ")
	switch {
	case len(ok) > 0:
		return medianPhase(ok), note
	case len(timedOut) > 0:
		return medianPhase(timedOut), note
	default:
		return runs[0].phase(pi.Name), note
	}
}

// medianPhase returns a phase whose every figure is the median of that
// figure over ps (all of one status; at least one).
func medianPhase(ps []*PhaseResult) *PhaseResult {
	med := func(v func(*PhaseResult) float64) float64 {
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = v(p)
		}
		return Median(xs)
	}
	out := &PhaseResult{Name: ps[0].Name, Status: ps[0].Status}
	out.WallSeconds = med(func(p *PhaseResult) float64 { return p.WallSeconds })
	out.Process.CPUSeconds = med(func(p *PhaseResult) float64 { return p.Process.CPUSeconds })
	out.Process.PeakRSSBytes = int64(med(func(p *PhaseResult) float64 { return float64(p.Process.PeakRSSBytes) }))
	out.Process.FinalRSSBytes = int64(med(func(p *PhaseResult) float64 { return float64(p.Process.FinalRSSBytes) }))
	out.Requests.Total = int(math.Round(med(func(p *PhaseResult) float64 { return float64(p.Requests.Total) })))
	keys := map[string]bool{}
	figures := map[string]bool{}
	for _, p := range ps {
		for k := range p.Requests.ByVerbResource {
			keys[k] = true
		}
		for k := range p.Figures {
			figures[k] = true
		}
	}
	if len(keys) > 0 {
		out.Requests.ByVerbResource = map[string]int{}
		for k := range keys {
			out.Requests.ByVerbResource[k] = int(math.Round(med(func(p *PhaseResult) float64 { return float64(p.Requests.ByVerbResource[k]) })))
		}
	}
	for k := range figures {
		var xs []float64
		for _, p := range ps {
			if v, ok := p.Figures[k]; ok {
				xs = append(xs, v)
			}
		}
		if out.Figures == nil {
			out.Figures = map[string]float64{}
		}
		out.Figures[k] = Median(xs)
	}
	return out
}

// Median returns the median of xs (the mean of the middle two for an even
// count), NaN for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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
// what did not run or finish in the notes. With repeated runs the figures
// are each binary's medians (RepetitionTable has every repetition).
func (r *Results) Table() string {
	var b strings.Builder
	r.tableHeader(&b, nil)
	for _, q := range r.Config.QPSSettings {
		for _, pi := range r.Config.Phases {
			r.tableRow(&b, []string{q, pi.Name}, func(bin string) (*PhaseResult, string) {
				return r.summaryPhase(q, bin, pi)
			})
		}
	}
	return b.String()
}

// RepetitionTable renders the table's rows for every repetition, one
// after another per QPS setting and phase; "" when runs were made once.
func (r *Results) RepetitionTable() string {
	if r.Config.Repeat <= 1 {
		return ""
	}
	var b strings.Builder
	r.tableHeader(&b, []string{"repetition"})
	for _, q := range r.Config.QPSSettings {
		for _, pi := range r.Config.Phases {
			for rep := 1; rep <= r.Config.Repeat; rep++ {
				r.tableRow(&b, []string{q, pi.Name, strconv.Itoa(rep)}, func(bin string) (*PhaseResult, string) {
					var run *RunResult
					for _, x := range r.runsOf(q, bin, pi.Set) {
						if x.Repetition == rep {
							run = x
						}
					}
					p := run.phase(pi.Name)
					return p, phaseNote(run, p)
				})
			}
		}
	}
	return b.String()
}

func (r *Results) tableHeader(b *strings.Builder, extra []string) {
	hdr := append([]string{"QPS", "phase"}, extra...)
	lead := len(hdr)
	for _, c := range columns() {
		hdr = append(hdr, c.header)
	}
	hdr = append(hdr, "notes")
	row(b, hdr)
	sep := make([]string, len(hdr))
	for i := range sep {
		sep[i] = "---"
		if i >= lead && i < len(hdr)-1 {
			sep[i] = "--:"
		}
	}
	row(b, sep)
}

// tableRow writes one row: the lead cells, then each column's figures of
// the phase pick returns per binary, then pick's notes.
func (r *Results) tableRow(b *strings.Builder, cells []string, pick func(bin string) (*PhaseResult, string)) {
	byBinary := map[string]*PhaseResult{}
	var notes []string
	for _, bin := range r.Config.Binaries {
		p, n := pick(bin)
		byBinary[bin] = p
		if n != "" {
			notes = append(notes, bin+": "+n)
		}
	}
	for _, c := range columns() {
		if len(r.Config.Binaries) == 2 {
			cells = append(cells, pairCell(byBinary[Upstream], byBinary[Ours], c))
		} else {
			cells = append(cells, valueCell(byBinary[r.Config.Binaries[0]], c))
		}
	}
	cells = append(cells, strings.Join(notes, "; "))
	row(b, cells)
}

// TableLegend explains the cells of Table.
func (r *Results) TableLegend() string {
	s := "Cells: " + r.Config.Binaries[0] + " only"
	if len(r.Config.Binaries) == 2 {
		s = "Cells: upstream / ours (ours÷upstream)"
	}
	if r.Config.Repeat > 1 {
		s += fmt.Sprintf(", each binary's median of %d repetitions (every repetition below)", r.Config.Repeat)
	}
	return s + "; – = not measured; ≥ = the phase timed out: time, CPU and requests up to its deadline."
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
	if slices.Contains(r.Config.PhaseSets, "scale") {
		fmt.Fprintf(&b, "Scale phases: %d nodes × 30 pods, %d Services; kwok's node leases %d s, its parallelism %d.\n",
			orDefault(p.ScaleNodes, defaultScaleNodes), orDefault(p.ScaleServices, defaultScaleServices), orDefault(p.NodeLeaseSeconds, defaultNodeLeaseSeconds), orDefault(p.KwokParallelism, defaultKwokParallelism))
	}
	if len(r.Config.ExtraArgs) > 0 {
		fmt.Fprintf(&b, "Extra controller manager arguments: `%s`.\n", strings.Join(r.Config.ExtraArgs, " "))
	}
	if len(r.Config.SchedulerArgs) > 0 {
		fmt.Fprintf(&b, "Extra kube-scheduler arguments: `%s`.\n", strings.Join(r.Config.SchedulerArgs, " "))
	}
	if r.Interrupted {
		b.WriteString("\n**Interrupted: figures are partial.**\n")
	}
	b.WriteString("\n" + r.TableLegend() + "\n\n")
	b.WriteString(r.Table())
	if rt := r.RepetitionTable(); rt != "" {
		b.WriteString("\n## Repetitions\n\nThe binaries took turns: repetition 1 of each, then 2, and so on.\n\n")
		b.WriteString(rt)
	}

	b.WriteString("\n## Runs\n\n")
	for _, run := range r.Runs {
		where := run.WorkDir
		if where == "" {
			where = "not started"
		}
		fmt.Fprintf(&b, "- %s, qps %s, %s", run.Binary, run.QPS, run.Scenario)
		if run.Repetition > 0 {
			fmt.Fprintf(&b, " (repetition %d)", run.Repetition)
		}
		fmt.Fprintf(&b, ": %s", where)
		if run.Setup != nil {
			fmt.Fprintf(&b, "; setup %s in %.1fs", run.Setup.Status, run.Setup.WallSeconds)
		}
		if run.Drained.Total > 0 {
			fmt.Fprintf(&b, "; %d more requests after the last phase", run.Drained.Total)
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
	if r.Config.Repeat > 1 {
		b.WriteString("\nEach count is the binary's median over the repetitions.\n")
	}
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
		p, _ := r.summaryPhase(q, bin, pi)
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
