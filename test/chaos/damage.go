package chaos

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Damage is what a faulted run's end state lost or doubled against the
// calm run's, read from the two normalised captures (objects only; Events
// are events.go's). A diff says that the runs differ; Damage says how, in
// the terms, so the counts table can add it up.
type Damage struct {
	// Missing are objects the calm run ends with and the faulted run lacks
	// ("Pod ns/web-<n>"): deleted although they should live, or never
	// made. Surplus are the reverse: made twice, or left to live.
	Missing, Surplus []string
	// FinalizersLeft are finalizers the faulted run's objects keep and the
	// calm run's do not ("Pod ns/x: batch.kubernetes.io/job-tracking").
	FinalizersLeft []string
	// Doubled and Lost compare each Job's status.succeeded and
	// status.failed with the calm run's: completions (or failures) counted
	// beyond it, or short of it.
	Doubled, Lost int
}

// None says the end states agree on everything Damage counts.
func (d Damage) None() bool {
	return len(d.Missing) == 0 && len(d.Surplus) == 0 && len(d.FinalizersLeft) == 0 && d.Doubled == 0 && d.Lost == 0
}

// String is "-" or e.g. "missing 1 (Pod a/x); finalizers left 1 (Pod
// a/y: f); completions +1".
func (d Damage) String() string {
	if d.None() {
		return "-"
	}
	var parts []string
	list := func(what string, l []string) {
		if len(l) > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", what, len(l), strings.Join(l, ", ")))
		}
	}
	list("missing", d.Missing)
	list("surplus", d.Surplus)
	list("finalizers left", d.FinalizersLeft)
	if d.Doubled > 0 {
		parts = append(parts, fmt.Sprintf("completions +%d", d.Doubled))
	}
	if d.Lost > 0 {
		parts = append(parts, fmt.Sprintf("completions -%d", d.Lost))
	}
	return strings.Join(parts, "; ")
}

// CaptureDamage compares a faulted run's normalised capture with the calm
// run's. Generated names are compared with their numbering masked
// (web-<n>), as multisets, so runs that numbered the same pods otherwise
// agree.
func CaptureDamage(calm, faulted string) (Damage, error) {
	var d Damage
	want, err := captureObjects(calm)
	if err != nil {
		return d, fmt.Errorf("calm run: %w", err)
	}
	got, err := captureObjects(faulted)
	if err != nil {
		return d, fmt.Errorf("faulted run: %w", err)
	}
	count := func(objs []captured, key func(captured) []string) map[string]int {
		m := map[string]int{}
		for _, o := range objs {
			for _, k := range key(o) {
				m[k]++
			}
		}
		return m
	}
	// beyond lists the keys a has more often than b, once per extra.
	beyond := func(a, b map[string]int) []string {
		var out []string
		for _, k := range sortedKeys(a) {
			for range a[k] - b[k] {
				out = append(out, k)
			}
		}
		return out
	}
	byName := func(o captured) []string { return []string{o.key} }
	d.Missing = beyond(count(want, byName), count(got, byName))
	d.Surplus = beyond(count(got, byName), count(want, byName))
	byFinalizer := func(o captured) []string {
		out := make([]string, 0, len(o.finalizers))
		for _, f := range o.finalizers {
			out = append(out, o.key+": "+f)
		}
		return out
	}
	d.FinalizersLeft = beyond(count(got, byFinalizer), count(want, byFinalizer))
	calmJobs := map[string]captured{}
	for _, o := range want {
		if o.job {
			calmJobs[o.key] = o
		}
	}
	for _, o := range got {
		c, ok := calmJobs[o.key]
		if !o.job || !ok {
			continue
		}
		for i := range o.terminal {
			if n := o.terminal[i] - c.terminal[i]; n > 0 {
				d.Doubled += n
			} else {
				d.Lost -= n
			}
		}
	}
	return d, nil
}

// captured is one object of a capture, as Damage needs it.
type captured struct {
	key        string // the header, "Kind ns/name", numbering masked
	finalizers []string
	job        bool
	terminal   [2]int // a Job's status.succeeded, status.failed
}

// captureObjects reads a capture's objects: parity writes each as a YAML
// document under a "--- # Kind ns/name" header, Events last.
func captureObjects(text string) ([]captured, error) {
	objs, _ := splitEvents(text)
	var out []captured
	for _, doc := range strings.Split("\n"+objs, "\n--- # ")[1:] {
		header, body, _ := strings.Cut(doc, "\n")
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Finalizers []string `json:"finalizers"`
			} `json:"metadata"`
			Status struct {
				Succeeded int `json:"succeeded"`
				Failed    int `json:"failed"`
			} `json:"status"`
		}
		if err := yaml.Unmarshal([]byte(body), &o); err != nil {
			return nil, fmt.Errorf("%s: %w", header, err)
		}
		out = append(out, captured{
			key: mask(header), finalizers: o.Metadata.Finalizers,
			job: o.Kind == "Job", terminal: [2]int{o.Status.Succeeded, o.Status.Failed},
		})
	}
	return out, nil
}
