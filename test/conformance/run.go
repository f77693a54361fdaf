package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// E2EBinary is the name of upstream's e2e suite in the binary directory.
const E2EBinary = "e2e.test"

// Options configures Run.
type Options struct {
	// OutDir receives results.xml (JUnit), one directory per cluster and
	// one log per spec.
	OutDir string
	// BinDir holds the cluster's binaries and e2e.test; empty means
	// test/cluster's default.
	BinDir string
	// ControllerManager is the binary under test: cluster.OurControllerManager
	// or cluster.UpstreamControllerManager (or a path).
	ControllerManager string
	// Clusters is how many control planes run side by side; Nodes the kwok
	// nodes each gets.
	Clusters, Nodes int
	// Timeout bounds one spec, its process's start-up included.
	Timeout time.Duration
	// Keep keeps the clusters' etcd data (logs are always kept).
	Keep bool
	// OnResult is called once per finished spec, from one goroutine at a time.
	OnResult func(Result)
	// Logf receives progress messages.
	Logf func(format string, args ...any)
}

// Run starts the clusters, runs every spec on one of them and returns the
// results in the order of specs. A cluster that cannot start takes no specs;
// when none starts, every spec's result is an Error naming why.
func Run(ctx context.Context, specs []string, o Options) []Result {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Clusters < 1 {
		o.Clusters = 1
	}
	if o.Clusters > len(specs) {
		o.Clusters = max(len(specs), 1)
	}
	results := make([]Result, len(specs))
	queue := make(chan int, len(specs))
	for i := range specs {
		queue <- i
	}
	close(queue)

	var (
		wg       sync.WaitGroup
		reportMu sync.Mutex
		startMu  sync.Mutex
		startErr []error
	)
	done := make([]bool, len(specs))
	for w := range o.Clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runWorker(ctx, w, specs, queue, o, func(i int, r Result) {
				reportMu.Lock()
				defer reportMu.Unlock()
				results[i], done[i] = r, true
				if o.OnResult != nil {
					o.OnResult(r)
				}
			})
			if err != nil {
				o.Logf("cluster %d: %v", w, err)
				startMu.Lock()
				startErr = append(startErr, fmt.Errorf("cluster %d: %w", w, err))
				startMu.Unlock()
			}
		}()
	}
	wg.Wait()
	why := "not run"
	if len(startErr) > 0 {
		why = errors.Join(startErr...).Error()
	}
	if ctx.Err() != nil {
		why = "interrupted"
	}
	for i, s := range specs {
		if !done[i] {
			results[i] = Result{Spec: s, Outcome: Error, Reason: why, Cluster: -1}
		}
	}
	return results
}

// runWorker brings up cluster w and runs specs from the queue on it until
// the queue is empty or ctx ends.
func runWorker(ctx context.Context, w int, specs []string, queue <-chan int, o Options, report func(int, Result)) error {
	dir := filepath.Join(o.OutDir, fmt.Sprintf("cluster-%d", w))
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		return err
	}
	o.Logf("cluster %d: starting in %s", w, dir)
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           dir,
		BinDir:            o.BinDir,
		ControllerManager: cluster.ControllerManagerOptions{Binary: o.ControllerManager},
		Logf:              func(f string, a ...any) { o.Logf(fmt.Sprintf("cluster %d: ", w)+f, a...) },
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Stop(); err != nil {
			o.Logf("cluster %d: stop: %v", w, err)
		}
		if !o.Keep {
			_ = os.RemoveAll(filepath.Join(dir, "etcd"))
		}
	}()
	if err := c.WaitForControllerManagerLeader(ctx); err != nil {
		return err
	}
	nodes, err := c.CreateNodes(ctx, cluster.DefaultNodePrefix, o.Nodes)
	if err != nil {
		return err
	}
	if err := c.WaitForNodesReady(ctx, nodes...); err != nil {
		return err
	}
	e2e := filepath.Join(c.BinDir(), E2EBinary)
	o.Logf("cluster %d: ready (%s)", w, c.APIServerURL)
	for i := range queue {
		if ctx.Err() != nil {
			return nil
		}
		n := len(fmt.Sprint(len(specs)))
		logPath := filepath.Join(dir, "specs", fmt.Sprintf("%0*d.log", n, i))
		r := runSpec(ctx, e2e, c.AdminKubeconfig, specs[i], logPath, o.Timeout)
		r.Cluster = w
		if ctx.Err() != nil && r.Outcome != Pass {
			return nil // interrupted: not a result
		}
		report(i, r)
	}
	return nil
}

// killGrace is how long after ginkgo's own timeout (which interrupts the
// spec and reports where it hung) the process is killed.
const killGrace = 45 * time.Second

// runSpec runs one spec in its own e2e.test process.
func runSpec(ctx context.Context, e2e, kubeconfig, spec, logPath string, timeout time.Duration, extra ...string) Result {
	// e2e.test runs in the log's directory: a relative report path would
	// be taken from there (a relative --conformance-dir lost every report).
	if abs, err := filepath.Abs(logPath); err == nil {
		logPath = abs
	}
	r := Result{Spec: spec, Log: logPath}
	logf, err := os.Create(logPath)
	if err != nil {
		r.Outcome, r.Reason = Error, err.Error()
		return r
	}
	defer logf.Close()
	report := strings.TrimSuffix(logPath, ".log") + ".json"
	_ = os.Remove(report)

	ctx, cancel := context.WithTimeout(ctx, timeout+killGrace)
	defer cancel()
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--ginkgo.focus=" + FocusFor(spec),
		"--ginkgo.timeout=" + timeout.String(),
		"--ginkgo.json-report=" + report,
		"--ginkgo.no-color",
		"--ginkgo.v",
		"--ginkgo.silence-skips",
		"--dump-logs-on-failure=false",
	}
	args = append(args, extra...)
	// The kubectl hack/tools builds beside e2e.test, of the suite's version,
	// rather than whatever the PATH has.
	if kubectl := filepath.Join(filepath.Dir(e2e), "kubectl"); isFile(kubectl) {
		args = append(args, "--kubectl-path="+kubectl)
	}
	cmd := exec.CommandContext(ctx, e2e, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = filepath.Dir(logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Kill the whole group: e2e.test may have started kubectl.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	fmt.Fprintf(logf, "==== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	start := time.Now()
	runErr := cmd.Run()
	r.Duration = time.Since(start)

	if ctx.Err() == context.DeadlineExceeded {
		r.Outcome = Timeout
		r.Reason = fmt.Sprintf("killed after %s; see %s", (timeout + killGrace).Round(time.Second), logPath)
		return withStep(r)
	}
	var reason string
	r.Outcome, _, reason = outcomeFromReport(report, spec)
	r.Reason = reason
	_ = os.Remove(report) // 5 MB, every skipped spec listed; the log has what matters
	if r.Outcome == Pass && runErr != nil {
		r.Outcome, r.Reason = Fail, fmt.Sprintf("the spec passed but e2e.test failed: %v (see %s)", runErr, logPath)
	}
	if r.Outcome != Pass && r.Reason == "" {
		r.Reason = fmt.Sprintf("e2e.test: %v", runErr)
	}
	return withStep(r)
}

// withStep puts the step a spec that did not pass was at in front of its
// reason.
func withStep(r Result) Result {
	if r.Outcome == Pass {
		return r
	}
	if b, err := os.ReadFile(r.Log); err == nil {
		if step := lastStep(b); step != "" {
			r.Reason = "at step: " + step + "\n" + r.Reason
		}
	}
	return r
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
