package parity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// Labels of the runs of a scenario; also their directory and capture names.
const (
	labelUpstream  = "upstream"
	labelOurs      = "kcm"
	labelUpstream2 = "upstream-again"
)

// Options configure Run.
type Options struct {
	// OutDir receives, per scenario, a directory with the normalised
	// captures (<label>.yaml), the diff (diff.txt) and the cluster work dirs
	// (<label>/: logs/, audit.log, parity.log). Work dirs are removed after a
	// PASS unless Keep; etcd's data dir is removed unless Keep.
	OutDir string
	Keep   bool
	// BinDir, Ours and Upstream select binaries as cluster.Options does;
	// empty means the defaults (_output/bin, kube-controller-manager,
	// upstream-kube-controller-manager).
	BinDir, Ours, Upstream string
	// SelfCheck runs upstream twice and diffs it against itself instead of
	// against kcm: a scenario must pass this before it is trusted.
	SelfCheck bool
	// Registry decides which scenarios are skipped; nil means
	// DefaultRegistry().
	Registry Registry
	// RunUnimplemented runs scenarios whose controllers kcm lacks, too.
	RunUnimplemented bool
	// Logf receives progress lines.
	Logf func(format string, args ...any)
	// OnResult, if set, is called with each result as it is known.
	OnResult func(Result)
	// Fault, if set, is switched on for the second run (kcm's, or
	// upstream's second with SelfCheck); with FaultBoth upstream also runs
	// a third time under it, as the control, diffed against its calm run
	// into Result.ControlDiff. The calm first run is what both are diffed
	// against.
	Fault     Fault
	FaultBoth bool
	// Calm, if set, is the OutDir of an earlier Run (with the same
	// binaries) whose calm first run of a scenario is reused where it has
	// one: its capture, metrics and work dir are copied instead of starting
	// upstream again, so a chaos run of several faults makes one calm run
	// per scenario rather than one per fault. Not with SelfCheck.
	Calm string
}

// Run runs each scenario on upstream and on kcm (or twice on upstream with
// SelfCheck), one cluster at a time, and returns one result per scenario.
func Run(ctx context.Context, scenarios []*Scenario, opts Options) []Result {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Registry == nil {
		opts.Registry = DefaultRegistry()
	}
	if opts.Ours == "" {
		opts.Ours = cluster.OurControllerManager
	}
	if opts.Upstream == "" {
		opts.Upstream = cluster.UpstreamControllerManager
	}
	if opts.Calm != "" && filepath.Clean(opts.Calm) == filepath.Clean(opts.OutDir) {
		// Each scenario's directory is emptied before it runs: the calm
		// runs to reuse would be gone.
		opts.Logf("parity: not reusing calm runs from %s, the output directory itself", opts.Calm)
		opts.Calm = ""
	}
	results := make([]Result, 0, len(scenarios))
	if err := prepareCloud(ctx, scenarios, opts); err != nil {
		for _, s := range scenarios {
			r := Result{Scenario: s, Status: StatusError, Reason: err.Error()}
			if opts.OnResult != nil {
				opts.OnResult(r)
			}
			results = append(results, r)
		}
		return results
	}
	for _, s := range scenarios {
		// Interrupted (SIGINT): the scenarios left are not run, rather
		// than each failing at once on a cluster that cannot start.
		if ctx.Err() != nil {
			break
		}
		r := runScenario(ctx, s, opts)
		if opts.OnResult != nil {
			opts.OnResult(r)
		}
		results = append(results, r)
	}
	return results
}

func runScenario(ctx context.Context, s *Scenario, opts Options) Result {
	res := Result{Scenario: s, Dir: filepath.Join(opts.OutDir, s.Name)}
	if !opts.SelfCheck {
		miss, err := missing(opts.Registry, s)
		if err != nil {
			res.Status, res.Reason = StatusError, err.Error()
			return res
		}
		if len(miss) > 0 && !opts.RunUnimplemented {
			res.Status, res.Missing = StatusSkip, miss
			return res
		}
	}
	if err := os.RemoveAll(res.Dir); err != nil {
		res.Status, res.Reason = StatusError, err.Error()
		return res
	}
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		res.Status, res.Reason = StatusError, err.Error()
		return res
	}

	first, second := labelUpstream, labelOurs
	secondBin := opts.Ours
	if opts.SelfCheck {
		second, secondBin = labelUpstream2, opts.Upstream
	}
	secondCloud := OurCloudBinary
	if opts.SelfCheck {
		secondCloud = UpstreamCloudBinary
	}
	texts := map[string]string{}
	type runSpec struct {
		label, binary, cloud string
		strict               bool // a failing step is the scenario's fault
		fault                Fault
	}
	runs := []runSpec{
		{first, opts.Upstream, UpstreamCloudBinary, true, nil},
		{second, secondBin, secondCloud, opts.SelfCheck, opts.Fault},
	}
	if opts.Fault != nil && opts.FaultBoth {
		runs = append(runs, runSpec{labelControl, opts.Upstream, UpstreamCloudBinary, false, opts.Fault})
	}
	if opts.Calm != "" && !opts.SelfCheck {
		text, fams, err := reuseCalm(filepath.Join(opts.Calm, s.Name), res.Dir, first)
		switch {
		case err == nil:
			opts.Logf("%s: %s: reused from %s", s.Name, first, opts.Calm)
			texts[first] = text
			res.Metrics = map[string]Families{first: fams}
			res.Runs = append(res.Runs, RunTime{Label: first})
			runs = runs[1:]
		case !errors.Is(err, fs.ErrNotExist):
			res.Status, res.Reason = StatusError, fmt.Sprintf("%s: reusing %s: %v", first, opts.Calm, err)
			return res
		}
	}
	for _, run := range runs {
		opts.Logf("%s: %s: starting", s.Name, run.label)
		start := time.Now()
		b := &binaryRun{s: s, binary: run.binary, cloud: run.cloud, strict: run.strict, fault: run.fault, dir: filepath.Join(res.Dir, run.label), opts: opts}
		text, err := b.run(ctx)
		took := time.Since(start).Round(time.Second)
		res.Runs = append(res.Runs, RunTime{Label: run.label, Took: took})
		if err == nil {
			texts[run.label] = text
			err = os.WriteFile(filepath.Join(res.Dir, run.label+".yaml"), []byte(text), 0o644)
		}
		if err == nil {
			if res.Metrics == nil {
				res.Metrics = map[string]Families{}
			}
			res.Metrics[run.label] = b.families
			err = writeFamilies(filepath.Join(res.Dir, run.label), b.families, b.metricsText)
		}
		if err == nil && run.label == labelOurs {
			err = staleBinary(filepath.Join(b.dir, "logs", string(cluster.ControllerManager)+".log"), opts.Registry, s)
		}
		if err != nil {
			res.Status, res.Reason = StatusError, fmt.Sprintf("%s: %v", run.label, err)
			cleanupRuns(res, opts)
			return res
		}
		opts.Logf("%s: %s: done in %s", s.Name, run.label, took)
	}

	res.Diff = UnifiedDiff(first, second, texts[first], texts[second])
	if text, ok := texts[labelControl]; ok {
		res.ControlDiff = UnifiedDiff(first, labelControl, texts[first], text)
		if err := os.WriteFile(filepath.Join(res.Dir, "control-diff.txt"), []byte(res.ControlDiff), 0o644); err != nil {
			opts.Logf("%s: %v", s.Name, err)
		}
	}
	res.Status = StatusPass
	if res.Diff != "" {
		res.Status = StatusDiff
		if err := os.WriteFile(filepath.Join(res.Dir, "diff.txt"), []byte(res.Diff), 0o644); err != nil {
			opts.Logf("%s: %v", s.Name, err)
		}
	}
	cleanupRuns(res, opts)
	return res
}

// reuseCalm copies the run labelled from an earlier result's directory
// (from) into dir: its capture, metrics files and work dir. An error
// wrapping fs.ErrNotExist means from has no such run.
func reuseCalm(from, dir, label string) (string, Families, error) {
	files := map[string][]byte{}
	for _, name := range []string{label + ".yaml", label + ".metrics.json", label + ".metrics.txt"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			return "", nil, err
		}
		files[name] = b
	}
	var fams Families
	if err := json.Unmarshal(files[label+".metrics.json"], &fams); err != nil {
		return "", nil, err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", nil, err
		}
	}
	// The work dir (its audit log and logs) is what chaos counts the calm
	// run's requests from; a kept-less earlier run may not have it.
	if fi, err := os.Stat(filepath.Join(from, label)); err == nil && fi.IsDir() {
		if err := os.CopyFS(filepath.Join(dir, label), os.DirFS(filepath.Join(from, label))); err != nil {
			return "", nil, err
		}
	}
	return string(files[label+".yaml"]), fams, nil
}

// binaryRun is one scenario on one fresh cluster with one binary.
type binaryRun struct {
	s      *Scenario
	binary string
	cloud  string // the cloud-controller-manager when the scenario has cloud
	strict bool
	fault  Fault // nil: a calm run
	dir    string
	opts   Options
	// families are the controller manager's metric families after the
	// capture.
	families    Families
	metricsText []byte
}

// run starts the cluster, runs the scenario and returns the normalised
// capture. With strict, a failing step is an error; otherwise it becomes a
// note in the capture and the remaining steps are skipped.
func (b *binaryRun) run(ctx context.Context) (text string, err error) {
	ctx, cancel := context.WithTimeout(ctx, b.s.Timeout.or(DefaultScenarioTimeout))
	defer cancel()
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return "", fmt.Errorf("parity: %w", err)
	}
	logFile, err := os.Create(filepath.Join(b.dir, "parity.log"))
	if err != nil {
		return "", fmt.Errorf("parity: %w", err)
	}
	defer logFile.Close()
	logf := func(format string, args ...any) {
		fmt.Fprintf(logFile, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}

	cloud, err := b.s.cloudOptions(b.dir, b.cloud)
	if err != nil {
		return "", err
	}
	copts := cluster.Options{
		WorkDir: b.dir,
		BinDir:  b.opts.BinDir,
		ControllerManager: cluster.ControllerManagerOptions{
			Binary:    b.binary,
			ExtraArgs: b.s.ControllerManagerArgs,
		},
		CloudControllerManager: cloud,
		DualStack:              b.s.DualStack,
		ExtraAPIServerArgs:     b.s.APIServerArgs,
		Logf:                   logf,
	}
	if b.fault != nil {
		if err := b.fault.Configure(&copts); err != nil {
			return "", fmt.Errorf("fault %s: %w", b.fault.Name(), err)
		}
	}
	c, err := cluster.Start(ctx, copts)
	if err != nil {
		return "", err
	}
	defer func() {
		if stopErr := c.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	if err := c.WaitForControllerManagerLeader(ctx); err != nil {
		return "", err
	}
	if cloud.Binary != "" {
		if err := c.WaitForCloudControllerManagerLeader(ctx); err != nil {
			return "", err
		}
	}
	var fault FaultRun
	if b.fault != nil {
		logf("parity: fault %s: on", b.fault.Name())
		if fault, err = b.fault.Start(ctx, c, logf); err != nil {
			return "", fmt.Errorf("fault %s: %w", b.fault.Name(), err)
		}
		defer fault.Close()
	}
	sess, err := newSession(c, b.s, b.opts.Upstream, logf)
	if err != nil {
		return "", err
	}
	if h, ok := fault.(StepHook); ok {
		sess.hook = h
	}
	if b.s.MetricsAPI {
		srv, err := startMetricsAPI(ctx, c)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		sess.steps.metrics = srv
	}
	var notes []string
	if err := sess.runSteps(ctx); err != nil {
		if b.strict {
			return "", err
		}
		notes = append(notes, err.Error()+"; later steps skipped")
	}
	if fault != nil {
		if err := fault.End(ctx); err != nil {
			return "", fmt.Errorf("fault %s: end: %w", b.fault.Name(), err)
		}
		logf("parity: fault %s: off", b.fault.Name())
	}
	set := b.s.Settle
	if set == nil {
		set = &Settle{}
	}
	text, err = sess.settleAndCapture(ctx, set)
	if err != nil && !errors.Is(err, errUnsettled) {
		return "", err
	}
	if err != nil {
		notes = append(notes, err.Error())
	}
	if len(notes) > 0 {
		// Recapture with the notes on top; the state is what settle saw.
		text, err = sess.snapshot(ctx, notes...)
		if err != nil {
			return "", err
		}
	}
	logf("parity: captured %d bytes", len(text))
	if b.families, b.metricsText, err = scrapeFamilies(ctx, c); err != nil {
		return "", err
	}
	return text, nil
}

// cleanupRuns removes the work dirs of a passed scenario's runs, and only
// etcd's data from those of a failed one, unless Keep.
func cleanupRuns(res Result, opts Options) {
	if opts.Keep {
		return
	}
	for _, run := range res.Runs {
		target := filepath.Join(res.Dir, run.Label)
		if res.Status != StatusPass {
			target = filepath.Join(target, "etcd")
		}
		if err := os.RemoveAll(target); err != nil {
			opts.Logf("parity: clean %s: %v", target, err)
		}
	}
}
