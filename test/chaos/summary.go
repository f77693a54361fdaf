package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/parity"
)

// helperControllers are required by most scenarios only to make kwok's
// nodes usable; Summary credits a scenario to them only when it lists one
// first (the scenario is about it) or needs nothing else.
var helperControllers = map[string]bool{"node-lifecycle-controller": true, "node-ipam-controller": true}

// subjects are the controllers a scenario's outcome is credited to: its
// required controllers (canonical names) but the helpers after the first.
func subjects(s *parity.Scenario) []string {
	reg := parity.DefaultRegistry()
	var all, main []string
	for i, req := range s.Requires {
		name, ok := reg.Canonical(req)
		if !ok {
			name = req
		}
		all = append(all, name)
		if i == 0 || !helperControllers[name] {
			main = append(main, name)
		}
	}
	if len(main) == 0 {
		return all
	}
	return main
}

// tally adds up one side's (kcm's or upstream's control) faulted runs.
type tally struct {
	runs, passed, extra, objects, finalizers, doubled, lost, panics, peakClient int
	peak                                                                        float64
	settle                                                                      time.Duration
}

func (t *tally) add(o Outcome, label string, passed bool) {
	c, ok := o.Counts[label]
	if !ok {
		return
	}
	t.runs++
	if passed {
		t.passed++
	}
	for _, n := range Extra(c, o.Counts[labelCalm]) {
		t.extra += n
	}
	d := o.Damage[label]
	t.objects += len(d.Missing) + len(d.Surplus)
	t.finalizers += len(d.FinalizersLeft)
	t.doubled += d.Doubled
	t.lost += d.Lost
	t.panics += c.Panics
	t.peak = max(t.peak, c.PeakRate)
	t.peakClient = max(t.peakClient, c.PeakClient)
	t.settle = max(t.settle, c.Settle)
}

// Summary is the counts table per fault class and controller, kcm's
// faulted runs beside upstream's control ("kcm / upstream", "-" without
// --control): each scenario's outcome is credited to every controller it
// requires (subjects). Columns: faulted runs that passed; creates beyond
// upstream's calm run; objects missing or surplus at the end; finalizers
// left; Job completions or failures counted twice (+) or never (−);
// panics in the log; the highest request rate in one second of the fault,
// of all users and of one user (one controller's client); the longest
// settle after it.
func Summary(outcomes []Outcome) string {
	type key struct{ fault, controller string }
	type row struct {
		scenarios     []string
		kcm, upstream tally
	}
	rows := map[key]*row{}
	for _, o := range outcomes {
		if o.Result.Scenario == nil || o.Result.Status == parity.StatusSkip {
			continue
		}
		_, controlEvents := o.EventsLost[labelControl]
		for _, ctrl := range subjects(o.Result.Scenario) {
			k := key{o.Fault, ctrl}
			r := rows[k]
			if r == nil {
				r = &row{}
				rows[k] = r
			}
			r.scenarios = append(r.scenarios, o.Result.Scenario.Name)
			if o.Result.Status == parity.StatusError {
				r.kcm.runs++
				continue
			}
			r.kcm.add(o, labelKCM, !o.Failed())
			r.upstream.add(o, labelControl, o.Result.ControlDiff == "" || controlEvents)
		}
	}
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].fault != keys[j].fault {
			return keys[i].fault < keys[j].fault
		}
		return keys[i].controller < keys[j].controller
	})
	var b strings.Builder
	b.WriteString("| fault | controller | scenarios | passed | extra creates | objects missing/surplus | finalizers left | completions +/− | panics | peak req/s | peak client req/s | settle max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		r := rows[k]
		pair := func(f func(t tally) string) string {
			if r.upstream.runs == 0 {
				return f(r.kcm) + " / -"
			}
			return f(r.kcm) + " / " + f(r.upstream)
		}
		num := func(get func(t tally) int) string {
			return pair(func(t tally) string { return fmt.Sprint(get(t)) })
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			k.fault, k.controller, len(r.scenarios),
			pair(func(t tally) string { return fmt.Sprintf("%d/%d", t.passed, t.runs) }),
			num(func(t tally) int { return t.extra }),
			num(func(t tally) int { return t.objects }),
			num(func(t tally) int { return t.finalizers }),
			pair(func(t tally) string { return fmt.Sprintf("+%d/−%d", t.doubled, t.lost) }),
			num(func(t tally) int { return t.panics }),
			pair(func(t tally) string { return fmt.Sprintf("%.0f", t.peak) }),
			num(func(t tally) int { return t.peakClient }),
			pair(func(t tally) string { return t.settle.Round(100 * time.Millisecond).String() }))
	}
	return b.String()
}
