package parity

import (
	"fmt"
	"strings"
	"time"
)

// Status is a scenario's outcome.
type Status string

// Outcomes. DIFF and ERROR count as failed.
const (
	StatusPass  Status = "PASS"
	StatusDiff  Status = "DIFF"
	StatusSkip  Status = "SKIP"
	StatusError Status = "ERROR"
)

// Result is the outcome of one scenario.
type Result struct {
	Scenario *Scenario
	Status   Status
	// Diff is the unified diff of the normalised captures (DIFF).
	Diff string
	// ControlDiff is upstream's run under Options.Fault against its calm
	// run (Options.FaultBoth); it does not change Status.
	ControlDiff string
	// Reason explains an ERROR.
	Reason string
	// Missing are the required controllers kcm does not implement (SKIP).
	Missing []string
	// Runs are the runs made, in order, with how long each took from
	// cluster start to stop.
	Runs []RunTime
	// Dir holds the captures, the diff and kept work dirs.
	Dir string
	// Metrics are the controller manager's metric families at the end of
	// each run, by run label (MetricsReport compares them).
	Metrics map[string]Families
}

// RunTime is how long one run of a scenario took.
type RunTime struct {
	Label string
	Took  time.Duration
}

// Failed reports whether the result counts as a failure.
func (r Result) Failed() bool { return r.Status == StatusDiff || r.Status == StatusError }

// Report is the result as a few readable lines: the status and name, then
// the diff or the reason.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %s", r.Status, r.Scenario.Name)
	if len(r.Runs) > 0 {
		parts := make([]string, 0, len(r.Runs))
		for _, run := range r.Runs {
			parts = append(parts, fmt.Sprintf("%s %s", run.Label, run.Took))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	b.WriteByte('\n')
	switch r.Status {
	case StatusSkip:
		fmt.Fprintf(&b, "      kcm does not implement %s\n", strings.Join(r.Missing, ", "))
	case StatusError:
		fmt.Fprintf(&b, "      %s\n", strings.ReplaceAll(r.Reason, "\n", "\n      "))
	case StatusDiff:
		b.WriteString(r.Diff)
	}
	if r.Failed() {
		fmt.Fprintf(&b, "      logs: %s\n", r.Dir)
	}
	return b.String()
}

// Summary lists the skipped scenarios with what they wait for, the
// coverage, and ends with the line "N passed, M failed" alone on its line.
func Summary(results []Result) string {
	var b strings.Builder
	passed, failed, skipped := 0, 0, 0
	for _, r := range results {
		switch {
		case r.Status == StatusPass:
			passed++
		case r.Failed():
			failed++
		case r.Status == StatusSkip:
			skipped++
			fmt.Fprintf(&b, "skipped %s (needs %s)\n", r.Scenario.Name, strings.Join(r.Missing, ", "))
		}
	}
	fmt.Fprintf(&b, "coverage: %d of %d scenarios run, %d skipped for controllers kcm does not implement yet\n",
		len(results)-skipped, len(results), skipped)
	fmt.Fprintf(&b, "%d passed, %d failed\n", passed, failed)
	return b.String()
}
