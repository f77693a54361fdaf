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
}

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
	flag.Parse()
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
	c, err := kubeadm.New(kubeadm.Options{BinDir: o.binDir, LogDir: filepath.Join(o.workDir, "logs"), Patches: patches, Workers: 1, Logf: log.Printf})
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
