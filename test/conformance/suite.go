package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// SuiteOptions configures RunSuite: specs against a cluster that exists
// already (a real node's, kubeadm's).
type SuiteOptions struct {
	// E2E is e2e.test (kubectl beside it is used); Kubeconfig the cluster's
	// admin kubeconfig.
	E2E, Kubeconfig string
	// Dir keeps the run: results.jsonl (a line per finished spec, read back
	// on resume), specs/<n>.log and results.xml.
	Dir string
	// Parallel is how many parallel-safe specs run side by side, each in
	// its own e2e.test process; [Serial] specs run afterwards, alone.
	Parallel int
	// Timeout bounds one spec.
	Timeout time.Duration
	// Args are more e2e.test flags, e.g. --kubelet-root-dir for specs that
	// deploy to the nodes' kubelet directories.
	Args []string
	// Budget, when positive, stops the start of new specs once it has
	// passed; the specs left are run by a later call (resume).
	Budget time.Duration
	// Sitting names this call in its results (which cluster a spec ran on).
	Sitting string
	// RerunFailed runs again the specs an earlier sitting did not pass
	// (after a fix to the harness or the cluster); their new result
	// replaces the old.
	RerunFailed bool
	// OnResult is called once per finished spec, from one goroutine at a time.
	OnResult func(Result)
	Logf     func(format string, args ...any)
}

// Serial reports whether upstream's runners run the spec alone.
func Serial(spec string) bool {
	return strings.Contains(spec, "[Serial]") || strings.Contains(spec, "[Disruptive]")
}

// resultsFile is the journal of finished specs in a suite's directory.
const resultsFile = "results.jsonl"

// LoadResults reads the finished specs of dir's earlier sittings, the last
// result of each spec winning.
func LoadResults(dir string) (map[string]Result, error) {
	f, err := os.Open(filepath.Join(dir, resultsFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Result{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]Result{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for s.Scan() {
		var r Result
		if err := json.Unmarshal(s.Bytes(), &r); err != nil {
			// A line cut by a crash mid-write is the spec not run.
			continue
		}
		out[r.Spec] = r
	}
	return out, s.Err()
}

// RunSuite runs the specs that dir has no result of yet: the parallel-safe
// ones Parallel at a time, then the serial ones one by one, as ginkgo's
// parallel mode does. Each result is appended to dir's journal as it ends,
// so an interrupted run resumes where it stopped (also on a new cluster of
// the same shape). It returns every spec's result in the order of specs,
// earlier sittings' included; a spec not yet run is an Error "not run".
func RunSuite(ctx context.Context, specs []string, o SuiteOptions) ([]Result, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "specs"), 0o755); err != nil {
		return nil, err
	}
	done, err := LoadResults(o.Dir)
	if err != nil {
		return nil, err
	}
	journal, err := os.OpenFile(filepath.Join(o.Dir, resultsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer journal.Close()

	var parallel, serial []int
	for i, s := range specs {
		if r, ok := done[s]; ok && (r.Passed() || !o.RerunFailed) {
			continue
		}
		if Serial(s) {
			serial = append(serial, i)
		} else {
			parallel = append(parallel, i)
		}
	}
	o.Logf("conformance: %d of %d specs finished in earlier sittings; %d parallel-safe and %d serial to run",
		len(specs)-len(parallel)-len(serial), len(specs), len(parallel), len(serial))

	var (
		mu       sync.Mutex
		start    = time.Now()
		width    = len(fmt.Sprint(len(specs)))
		writeErr error
	)
	expired := func() bool { return ctx.Err() != nil || (o.Budget > 0 && time.Since(start) > o.Budget) }
	run := func(i int) {
		logPath := filepath.Join(o.Dir, "specs", fmt.Sprintf("%0*d.log", width, i))
		r := runSpec(ctx, o.E2E, o.Kubeconfig, specs[i], logPath, o.Timeout, o.Args...)
		if ctx.Err() != nil && r.Outcome != Pass {
			return // interrupted: not a result
		}
		r.Sitting = o.Sitting
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(r)
		if _, err := journal.Write(append(b, '\n')); err != nil && writeErr == nil {
			writeErr = err
		}
		done[r.Spec] = r
		if o.OnResult != nil {
			o.OnResult(r)
		}
	}
	phase := func(idx []int, workers int) {
		next := make(chan int)
		var wg sync.WaitGroup
		for range max(workers, 1) {
			wg.Go(func() {
				for i := range next {
					run(i)
				}
			})
		}
	feed:
		for _, i := range idx {
			if expired() {
				break
			}
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
	}
	phase(parallel, o.Parallel)
	phase(serial, 1)

	results := make([]Result, len(specs))
	for i, s := range specs {
		r, ok := done[s]
		if !ok {
			r = Result{Spec: s, Outcome: Error, Reason: notRun, Cluster: -1}
		}
		results[i] = r
	}
	return results, writeErr
}

// notRun is the reason of a spec RunSuite has not run yet.
const notRun = "not run"

// NotRun counts the results of specs RunSuite has not run yet.
func NotRun(results []Result) int {
	n := 0
	for _, r := range results {
		if r.Outcome == Error && r.Reason == notRun && r.Sitting == "" {
			n++
		}
	}
	return n
}

// RunAndReport is RunSuite for the node commands: it prints a line per
// spec as it ends (with the reason of one that did not pass), writes
// Dir/results.xml (JUnit, every spec of every sitting) and returns the
// closing lines, the last one "N passed, M failed".
func RunAndReport(ctx context.Context, suite string, specs []string, o SuiteOptions, printf func(string, ...any)) (summary string, failed int, err error) {
	o.OnResult = func(r Result) {
		printf("%s", r.Line())
		if !r.Passed() {
			printf("%s", Indent(r.Reason, "        "))
		}
	}
	start := time.Now()
	results, err := RunSuite(ctx, specs, o)
	if err != nil && results == nil {
		return "", 0, err
	}
	var ran []Result
	var elapsed time.Duration
	for _, r := range results {
		if r.Sitting != "" {
			ran = append(ran, r)
			elapsed += r.Duration
		}
	}
	junit := filepath.Join(o.Dir, "results.xml")
	if jerr := WriteJUnit(junit, suite, ran, elapsed); jerr != nil {
		err = errors.Join(err, jerr)
	}
	var b strings.Builder
	passed := 0
	for _, r := range ran {
		if r.Passed() {
			passed++
		} else {
			fmt.Fprintf(&b, "not passed: %s %s\n", strings.ToUpper(string(r.Outcome)), r.Spec)
		}
	}
	fmt.Fprintf(&b, "this sitting took %s; JUnit %s, logs in %s\n", time.Since(start).Round(time.Second), junit, filepath.Join(o.Dir, "specs"))
	if n := NotRun(results); n > 0 {
		fmt.Fprintf(&b, "%d of %d specs not run yet: run the same command again to resume\n", n, len(specs))
	}
	fmt.Fprintf(&b, "%d passed, %d failed\n", passed, len(ran)-passed)
	return b.String(), len(ran) - passed, err
}

// Indent prefixes every line of s, keeping at most 12 lines.
func Indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 12 {
		lines = append(lines[:12], fmt.Sprintf("… (%d more lines in the log)", len(lines)-12))
	}
	return prefix + strings.Join(lines, "\n"+prefix)
}
