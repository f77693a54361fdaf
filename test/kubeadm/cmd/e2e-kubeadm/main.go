// Command e2e-kubeadm runs `make e2e-kubeadm`: a kind-like cluster on this
// machine made by kubeadm v1.37.1 itself (package test/kubeadm: one
// control-plane node and a worker, each its own network, mount and UTS
// namespace), with kcm's image swapped into the kube-controller-manager
// static pod by manifests/kind-patches, or with --upstream kubeadm's
// default image; then the checks of checks.go and the swap checks of
// swap.go; then a teardown that leaves the machine as it found it, also
// after an error or SIGINT. Needs root.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/conformance"
	"github.com/kcm-dev/kcm/test/kubeadm"
	"github.com/kcm-dev/kcm/test/node"
)

type options struct {
	upstream   bool
	binDir     string
	workDir    string
	timeout    time.Duration
	keep       bool
	stable     time.Duration
	swapWindow time.Duration
	noSwap     bool
	workers    int

	// The conformance suite (conformance.go).
	all, includeExcluded, fresh, rerun bool
	specList, focus, suiteOut          string
	parallel                           int
	specTimeout, budget                time.Duration
}

// suite reports whether a conformance suite runs after the set-up.
func (o options) suite() bool { return o.all || o.specList != "" }

func main() {
	var o options
	flag.BoolVar(&o.upstream, "upstream", false, "run kubeadm's default kube-controller-manager image (upstream's) instead of kcm's")
	flag.StringVar(&o.binDir, "bin-dir", "", "binaries (default _output/bin)")
	flag.StringVar(&o.workDir, "work-dir", "", "logs and reports, kept (default _output/e2e-kubeadm)")
	flag.DurationVar(&o.timeout, "timeout", 50*time.Minute, "bound on the whole run before the teardown")
	flag.BoolVar(&o.keep, "keep", false, "after the checks, keep the cluster until SIGINT (KUBECONFIG is printed)")
	flag.DurationVar(&o.stable, "stable", 5*time.Minute, "how long the controller manager's static pod must run without a restart")
	flag.DurationVar(&o.swapWindow, "swap-window", 3*time.Minute, "how long after each swap the controller manager's writes are counted")
	flag.BoolVar(&o.noSwap, "no-swap", false, "skip the swap checks")
	flag.IntVar(&o.workers, "workers", 0, "worker nodes (default 1; 2 with a conformance suite, which needs two schedulable nodes)")
	flag.BoolVar(&o.all, "conformance-all", false, "after the set-up, instead of the checks: every [Conformance] spec of e2e.test (test/conformance/all.txt), parallel-safe ones side by side, [Serial] ones alone, as the certification program runs them")
	flag.StringVar(&o.specList, "conformance-list", "", "like --conformance-all, with the specs of this list (e.g. test/conformance/node.txt)")
	flag.StringVar(&o.focus, "conformance-focus", "", "run only the listed specs matching this regular expression")
	flag.BoolVar(&o.includeExcluded, "conformance-include-excluded", false, "also run the specs test/conformance/kubeadm-excluded.txt leaves out")
	flag.IntVar(&o.parallel, "conformance-parallel", 4, "parallel-safe specs at a time, each in its own e2e.test process")
	flag.DurationVar(&o.specTimeout, "conformance-spec-timeout", 10*time.Minute, "deadline of one spec")
	flag.DurationVar(&o.budget, "conformance-budget", 0, "start no spec after this long (0: none); the next run on a fresh cluster resumes with the specs left")
	flag.StringVar(&o.suiteOut, "conformance-dir", "", "the suite's results, kept across runs to resume (default <work-dir>/conformance-kcm or -upstream)")
	flag.BoolVar(&o.fresh, "conformance-fresh", false, "discard the results of earlier runs and start the suite over")
	flag.BoolVar(&o.rerun, "conformance-rerun-failed", false, "also run again the specs an earlier run did not pass")
	flag.Parse()
	timeoutSet := false
	flag.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	if o.suite() && !timeoutSet {
		o.timeout = 12 * time.Hour // the whole suite, set-up and teardown aside
	}
	if o.workers == 0 {
		o.workers = 1
		if o.suite() {
			o.workers = 2
		}
	}
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if err := run(o); err != nil {
		log.Printf("e2e-kubeadm: FAIL: %v", err)
		os.Exit(1)
	}
	log.Printf("e2e-kubeadm: PASS")
}

func run(o options) (err error) {
	if os.Geteuid() != 0 {
		return errors.New("must run as root (it makes network and mount namespaces, runs containerd and kubelets)")
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	if o.binDir == "" {
		o.binDir = filepath.Join(root, "_output", "bin")
	}
	if o.workDir == "" {
		o.workDir = filepath.Join(root, "_output", "e2e-kubeadm")
	}
	for _, b := range append(kubeadm.Binaries, node.NodeBinaries...) {
		if _, err := os.Stat(filepath.Join(o.binDir, b)); err != nil {
			return fmt.Errorf("%s missing: make build tools && hack/tools/build.sh kubeadm kubectl kubelet kube-proxy agnhost coredns pause", b)
		}
	}
	if o.suite() {
		if _, err := os.Stat(filepath.Join(o.binDir, conformance.E2EBinary)); err != nil {
			return fmt.Errorf("%s missing: hack/tools/build.sh e2e.test", conformance.E2EBinary)
		}
		if _, _, err := o.conformanceSpecs(); err != nil {
			return err
		}
	}
	if err := node.EnsurePackages(log.Printf); err != nil {
		return err
	}
	_ = os.RemoveAll(filepath.Join(o.workDir, "logs"))

	ctx, cancel := node.RunContext("e2e-kubeadm", o.timeout)
	defer cancel()

	patches := filepath.Join(root, "manifests", "kind-patches")
	if o.upstream {
		patches = ""
	}
	started := time.Now()
	c, err := kubeadm.New(kubeadm.Options{BinDir: o.binDir, LogDir: filepath.Join(o.workDir, "logs"), Patches: patches, Workers: o.workers, Logf: log.Printf})
	if c != nil {
		defer func() {
			t := time.Now()
			terr := c.Teardown()
			if terr == nil {
				log.Printf("e2e-kubeadm: teardown verified in %v: no process, namespace, link, cgroup, mount or path of the run is left", time.Since(t).Round(time.Millisecond))
			}
			err = errors.Join(err, terr)
		}()
	}
	if err != nil {
		return err
	}
	e := &env{ctx: ctx, c: c, o: o, kubectl: filepath.Join(o.binDir, "kubectl")}
	if err := e.all(); err != nil {
		return err
	}
	log.Printf("e2e-kubeadm: all checks passed in %v (%s)", time.Since(started).Round(time.Second), e.wantImage())
	if o.keep {
		log.Printf("e2e-kubeadm: --keep: export KUBECONFIG=%s; SIGINT tears down", c.AdminKubeconfig())
		<-ctx.Done()
	}
	return nil
}
