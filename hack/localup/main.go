// Command localup is what `make run` runs: a local control plane (etcd,
// kube-apiserver, kube-scheduler, kwok with fake nodes) driven by this
// repository's kube-controller-manager, or upstream's with --upstream. It
// prints how to point kubectl at it and runs until Ctrl-C or SIGTERM, then
// stops every process it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root, err := cluster.RepoRoot()
	if err != nil {
		root = "." // flags with explicit paths still work
	}
	var (
		workDir  = flag.String("work-dir", filepath.Join(root, "_output", "local"), "directory for PKI, kubeconfigs, etcd data, logs and the audit log")
		binDir   = flag.String("bin-dir", filepath.Join(root, "_output", "bin"), "directory of etcd, kube-apiserver, kube-scheduler, kwok and kwok-stages")
		kcm      = flag.String("kcm", filepath.Join(root, "_output", "bin", cluster.OurControllerManager), "kube-controller-manager binary to run")
		upstream = flag.Bool("upstream", false, "run upstream's kube-controller-manager (<bin-dir>/"+cluster.UpstreamControllerManager+") instead of --kcm")
		nodes    = flag.Int("nodes", 3, "number of fake kwok nodes to create")
		timeout  = flag.Duration("start-timeout", 3*time.Minute, "how long each component may take to become ready")
		lbCIDR   = flag.String("lb-cidr", "", "run kcm's cloud-controller-manager with the local cloud provider beside the controller manager, LoadBalancer Service addresses from this pool (e.g. 172.18.255.0/28; empty: no cloud-controller-manager, as kubeadm)")
		kcmArgs  stringList
	)
	flag.Var(&kcmArgs, "kcm-arg", "extra kube-controller-manager argument, e.g. --kcm-arg=--v=4 (repeatable)")
	flag.Parse()

	bin := *kcm
	if *upstream {
		bin = filepath.Join(*binDir, cluster.UpstreamControllerManager)
	}
	if !strings.ContainsRune(bin, filepath.Separator) {
		bin = "." + string(filepath.Separator) + bin // a path, not a name in bin-dir
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ccm, err := cloudControllerManager(*workDir, *lbCIDR)
	if err != nil {
		return err
	}
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:                *workDir,
		BinDir:                 *binDir,
		ControllerManager:      cluster.ControllerManagerOptions{Binary: bin, ExtraArgs: kcmArgs},
		CloudControllerManager: ccm,
		StartTimeout:           *timeout,
		Logf:                   log.Printf,
	})
	if err != nil {
		return err
	}
	err = serve(ctx, c, *nodes)
	if stopErr := c.Stop(); stopErr != nil {
		err = errors.Join(err, stopErr)
	}
	if err == nil {
		log.Printf("stopped; files remain in %s", c.WorkDir)
	}
	return err
}

// serve creates the nodes, prints how to use the cluster and waits for a
// signal, reporting any component that exits meanwhile.
func serve(ctx context.Context, c *cluster.Cluster, nodes int) error {
	var names []string
	if nodes > 0 {
		var err error
		if names, err = c.CreateNodes(ctx, cluster.DefaultNodePrefix, nodes); err != nil {
			return err
		}
	}
	fmt.Printf(`
Local cluster is up (controller manager: %s).

  export KUBECONFIG=%s
  kubectl get nodes

  logs:       %s/<component>.log
  audit log:  %s
  kcm health: https://127.0.0.1:%d/healthz
  pids:       %s

Ctrl-C stops everything.
`, c.Options().ControllerManager.Binary, c.AdminKubeconfig, c.LogDir, c.AuditLogPath, c.Ports.ControllerManager, formatPIDs(c.PIDs()))

	if len(names) > 0 {
		// Nodes lose the not-ready taint only through node-lifecycle-controller.
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := c.WaitForNodesReady(wctx, names...); err != nil {
				if ctx.Err() == nil {
					log.Printf("warning: %d kwok nodes are not schedulable yet: %v", len(names), err)
				}
				return
			}
			log.Printf("%d kwok nodes are Ready and schedulable", len(names))
		}()
	}

	running := c.PIDs()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			log.Printf("signal received, stopping")
			return nil
		case <-tick.C:
			now := c.PIDs()
			for comp, pid := range running {
				if now[comp] == 0 {
					log.Printf("%s (pid %d) exited; see %s", comp, pid, c.LogPath(comp))
				}
			}
			running = now
		}
	}
}

func formatPIDs(pids map[cluster.Component]int) string {
	parts := make([]string, 0, len(pids))
	for comp, pid := range pids {
		parts = append(parts, fmt.Sprintf("%s=%d", comp, pid))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// cloudControllerManager returns the cloud-controller-manager to run for
// --lb-cidr: kcm's, with the local provider and a cloud config (written
// to the work dir) naming the pool; none without a pool.
func cloudControllerManager(workDir, lbCIDR string) (cluster.CloudControllerManagerOptions, error) {
	if lbCIDR == "" {
		return cluster.CloudControllerManagerOptions{}, nil
	}
	if _, err := netip.ParsePrefix(lbCIDR); err != nil {
		return cluster.CloudControllerManagerOptions{}, fmt.Errorf("--lb-cidr: %w", err)
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return cluster.CloudControllerManagerOptions{}, err
	}
	config := filepath.Join(workDir, "cloud-config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("loadBalancerCIDRs: [%q]\n", lbCIDR)), 0o644); err != nil {
		return cluster.CloudControllerManagerOptions{}, err
	}
	return cluster.CloudControllerManagerOptions{
		Binary:    "cloud-controller-manager",
		ExtraArgs: []string{"--cloud-provider=local", "--cloud-config=" + config},
	}, nil
}
