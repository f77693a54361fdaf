package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/kcm-dev/kcm/test/parity"
)

// Load reads back the outcomes a Run left under outDir
// (<fault>/<scenario>/), so runs made by several invocations (one per
// --kills, say) can be summed up in one table: the status from the
// captures and diffs parity wrote, the counts from the runs' work dirs.
// scenarios resolves a scenario directory's name; one it does not know is
// an error.
func Load(outDir string, scenarios []*parity.Scenario) ([]Outcome, error) {
	byName := map[string]*parity.Scenario{}
	for _, s := range scenarios {
		byName[s.Name] = s
	}
	faults, err := subdirs(outDir)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	for _, fault := range faults {
		names, err := subdirs(filepath.Join(outDir, fault))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			s, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("chaos: %s: no scenario %q", filepath.Join(outDir, fault), name)
			}
			dir := filepath.Join(outDir, fault, name)
			r := parity.Result{Scenario: s, Dir: dir, Status: parity.StatusPass}
			var labels []string
			for _, l := range []string{labelCalm, labelKCM, labelControl} {
				if fi, err := os.Stat(filepath.Join(dir, l)); err == nil && fi.IsDir() {
					labels = append(labels, l)
				}
			}
			diff, _ := os.ReadFile(filepath.Join(dir, "diff.txt"))
			control, _ := os.ReadFile(filepath.Join(dir, "control-diff.txt"))
			r.Diff, r.ControlDiff = string(diff), string(control)
			if _, err := os.Stat(filepath.Join(dir, labelKCM+".yaml")); err != nil {
				r.Status, r.Reason = parity.StatusError, "no capture of kcm's run"
			} else if r.Diff != "" {
				r.Status = parity.StatusDiff
			}
			o := Outcome{Fault: fault, Result: r}
			o.measure(labels, func(string, ...any) {})
			out = append(out, o)
		}
	}
	return out, nil
}

func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}
