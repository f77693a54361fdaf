package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kcm-dev/kcm/test/parity"
)

// The run labels parity gives the calm run, kcm's and the control's.
const (
	labelCalm    = "upstream"
	labelKCM     = "kcm"
	labelControl = "upstream-fault"
)

// Options configure Run.
type Options struct {
	// Faults are class names (Names); Config tunes them.
	Faults []string
	Config Config
	// Control also runs upstream under each fault.
	Control bool
	// OutDir gets <fault>/<scenario>/ (parity's layout: captures, diff.txt,
	// control-diff.txt, the runs' work dirs without etcd's data, counts.txt)
	// and results.md.
	OutDir string
	// Calm, if set, is a fault directory of an earlier Run with the same
	// binaries (<OutDir>/<fault>) whose calm upstream runs are reused
	// (parity's Options.Calm). Within one Run, every fault after the first
	// reuses the first one's calm runs anyway.
	Calm string
	// BinDir, Ours and Upstream are parity's.
	BinDir, Ours, Upstream string
	Logf                   func(format string, args ...any)
	// OnResult, if set, is called with each outcome as it is known.
	OnResult func(Outcome)
}

// Outcome is one scenario under one fault.
type Outcome struct {
	Fault  string
	Result parity.Result
	// Counts by run label: upstream (calm), kcm, upstream-fault (Control).
	Counts map[string]Counts
	// CountErr is why counting failed, if it did.
	CountErr error
	// EventsLost, by run label (kcm, upstream-fault), are the Events a
	// faulted run lacks when they are its capture's only difference from
	// the calm run and its log says the recorder dropped at least as many,
	// or its process ended during the fault (a kill, a lost Lease), taking
	// the Events still queued with it (events.go). Such a run passes.
	EventsLost map[string]int
	// Damage, by faulted run label, is how its end state differs from the
	// calm run's (damage.go).
	Damage map[string]Damage
}

// Failed says whether kcm's run differs from upstream's calm one by more
// than Events the recorder dropped or a process took with it, the run
// errored, or kcm's log has a panic.
func (o Outcome) Failed() bool {
	if o.Counts[labelKCM].Panics > 0 {
		return true
	}
	if o.Result.Status == parity.StatusDiff {
		_, explained := o.EventsLost[labelKCM]
		return !explained
	}
	return o.Result.Failed()
}

// explainEvents fills o.EventsLost for the faulted runs whose diff is
// only Events the recorder dropped, or lost with a process that ended.
func (o *Outcome) explainEvents() error {
	diffs := map[string]string{labelKCM: o.Result.Diff, labelControl: o.Result.ControlDiff}
	calm, err := os.ReadFile(filepath.Join(o.Result.Dir, labelCalm+".yaml"))
	if err != nil {
		return err
	}
	for label, diff := range diffs {
		c, counted := o.Counts[label]
		if diff == "" || !counted {
			continue
		}
		text, err := os.ReadFile(filepath.Join(o.Result.Dir, label+".yaml"))
		if err != nil {
			return err
		}
		lost, ok, err := EventLoss(string(calm), string(text))
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		if ok && (lost <= c.EventsDropped || c.processEnded()) {
			if o.EventsLost == nil {
				o.EventsLost = map[string]int{}
			}
			o.EventsLost[label] = lost
		}
	}
	return nil
}

// measure fills the outcome's counts from the work dirs of the runs
// labelled (under o.Result.Dir), the Events a faulted run lost, and each
// faulted run's damage.
func (o *Outcome) measure(labels []string, logf func(string, ...any)) {
	o.Counts = map[string]Counts{}
	for _, l := range labels {
		c, err := Count(filepath.Join(o.Result.Dir, l))
		if err != nil {
			o.CountErr = err
			continue
		}
		o.Counts[l] = c
	}
	r := o.Result
	if r.Status == parity.StatusDiff || r.ControlDiff != "" {
		if err := o.explainEvents(); err != nil {
			logf("chaos: %s: %v", r.Scenario.Name, err)
		}
	}
	calm, err := os.ReadFile(filepath.Join(r.Dir, labelCalm+".yaml"))
	if err != nil {
		return
	}
	for _, l := range []string{labelKCM, labelControl} {
		text, err := os.ReadFile(filepath.Join(r.Dir, l+".yaml"))
		if err != nil {
			continue
		}
		d, err := CaptureDamage(string(calm), string(text))
		if err != nil {
			logf("chaos: %s: %s: %v", r.Scenario.Name, l, err)
			continue
		}
		if o.Damage == nil {
			o.Damage = map[string]Damage{}
		}
		o.Damage[l] = d
	}
}

// Run runs every scenario under every fault, one cluster at a time, and
// writes OutDir/results.md.
func Run(ctx context.Context, scenarios []*parity.Scenario, opts Options) ([]Outcome, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	var out []Outcome
	calm := opts.Calm
	for i, name := range opts.Faults {
		if i > 0 {
			calm = filepath.Join(opts.OutDir, opts.Faults[0])
		}
		f, err := New(name, opts.Config)
		if err != nil {
			return out, err
		}
		results := parity.Run(ctx, scenarios, parity.Options{
			OutDir: filepath.Join(opts.OutDir, name), Keep: true,
			BinDir: opts.BinDir, Ours: opts.Ours, Upstream: opts.Upstream,
			Fault: f, FaultBoth: opts.Control, Calm: calm, Logf: opts.Logf,
		})
		for _, r := range results {
			o := Outcome{Fault: name, Result: r}
			labels := make([]string, 0, len(r.Runs))
			for _, run := range r.Runs {
				labels = append(labels, run.Label)
			}
			o.measure(labels, opts.Logf)
			for _, l := range labels {
				// etcd's data is large and says nothing the capture does not.
				if err := os.RemoveAll(filepath.Join(r.Dir, l, "etcd")); err != nil {
					opts.Logf("chaos: %v", err)
				}
			}
			if r.Dir != "" && len(o.Counts) > 0 {
				if err := os.WriteFile(filepath.Join(r.Dir, "counts.txt"), []byte(Table([]Outcome{o})), 0o644); err != nil {
					opts.Logf("chaos: %v", err)
				}
			}
			if opts.OnResult != nil {
				opts.OnResult(o)
			}
			out = append(out, o)
		}
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return out, err
	}
	return out, os.WriteFile(filepath.Join(opts.OutDir, "results.md"), []byte(Table(out)), 0o644)
}

// Table is the results as a markdown table: a row per fault, scenario and
// faulted run (kcm, and upstream's control), with the calm run's creates
// for reference. extra: creates beyond upstream's calm run; 429: answers
// the controller manager got; watches/relists and peak/mean req/s: during
// the fault (Counts); Events lost/dropped: Events missing from the
// capture and those the recorder's log says it gave up on (a PASS may
// lack such Events, events.go); damage: what its end state lost or doubled
// (damage.go); settle: the time to converge after it.
func Table(outcomes []Outcome) string {
	var b strings.Builder
	b.WriteString("| fault | scenario | run | result | creates | extra | deletes | 429 | watches/relists | peak/mean req/s | peak client req/s | Events lost/dropped | damage | panics | settle | fault figures |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range outcomes {
		calm := o.Counts[labelCalm]
		if o.Result.Status == parity.StatusSkip || o.Result.Status == parity.StatusError {
			reason := strings.Join(o.Result.Missing, ", ")
			if o.Result.Status == parity.StatusError {
				reason = strings.ReplaceAll(firstLine(o.Result.Reason), "|", "/")
			}
			fmt.Fprintf(&b, "| %s | %s | | %s %s | | | | | | | | | | | | |\n", o.Fault, o.Result.Scenario.Name, o.Result.Status, reason)
			continue
		}
		for _, label := range []string{labelCalm, labelKCM, labelControl} {
			c, ok := o.Counts[label]
			if !ok {
				continue
			}
			result := ""
			switch label {
			case labelKCM:
				result = string(o.Result.Status)
				if _, ok := o.EventsLost[label]; ok {
					result = string(parity.StatusPass)
				}
			case labelControl:
				result = "PASS"
				if _, ok := o.EventsLost[label]; !ok && o.Result.ControlDiff != "" {
					result = "DIFF"
				}
			default:
				result = "calm"
			}
			extra, damage := "-", ""
			if label != labelCalm {
				extra = short(Extra(c, calm))
				if d, ok := o.Damage[label]; ok {
					damage = d.String()
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d | %d/%d | %.0f/%.1f | %d %s | %d/%d | %s | %d | %s | %s |\n",
				o.Fault, o.Result.Scenario.Name, label, result, short(c.Creates), extra, short(c.Deletes),
				c.Throttled, c.Watches, c.Relists, c.PeakRate, c.MeanRate, c.PeakClient, shortUser(c.PeakClientUser), o.EventsLost[label], c.EventsDropped,
				strings.ReplaceAll(damage, "|", "/"), c.Panics, c.Settle, figures(c.Fault))
		}
	}
	return b.String()
}

// shortUser drops the prefix of kube-system's ServiceAccounts.
func shortUser(u string) string {
	return strings.TrimPrefix(u, "system:serviceaccount:kube-system:")
}

func figures(r *Record) string {
	if r == nil || len(r.Figures) == 0 {
		return ""
	}
	parts := make([]string, 0, len(r.Figures))
	for _, k := range sortedKeys(r.Figures) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, r.Figures[k]))
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
