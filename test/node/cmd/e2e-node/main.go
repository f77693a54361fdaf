// Command e2e-node runs `make e2e-node`: a control plane (test/cluster,
// no kwok) with kcm or, with --upstream, upstream's kube-controller-manager,
// and one real node on this machine (containerd, runc, a bridge CNI, a
// TLS-bootstrapped kubelet, kube-proxy and CoreDNS from kubeadm's
// manifests) whose address, also the apiserver's advertise address, is on a
// link the run creates (node.LinkName), then the checks of checks.go and
// of package test/node/checks, then a teardown that leaves the machine as
// it found it, also after an error or SIGINT. Needs root.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/node"
	"github.com/kcm-dev/kcm/test/node/checks"
	"k8s.io/client-go/dynamic"
)

type options struct {
	upstream    bool
	kcm         string
	binDir      string
	workDir     string
	nodeDir     string
	timeout     time.Duration
	keep        bool
	conformance string
	parallel    int
	specList    string
	containerd  string
}

func main() {
	var o options
	flag.BoolVar(&o.upstream, "upstream", false, "run upstream's kube-controller-manager instead of kcm")
	flag.StringVar(&o.kcm, "kcm", "", "the kube-controller-manager binary to test (default: kcm's, in the bin dir)")
	flag.StringVar(&o.binDir, "bin-dir", "", "binaries (default _output/bin)")
	flag.StringVar(&o.workDir, "work-dir", "", "control plane files and every log, kept (default _output/e2e-node)")
	flag.StringVar(&o.nodeDir, "node-dir", node.DefaultDir, "the node's state, removed at the end")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "bound on the whole run before the teardown")
	flag.BoolVar(&o.keep, "keep", false, "after the checks, keep everything running until SIGINT (KUBECONFIG is printed)")
	flag.StringVar(&o.conformance, "conformance", "", "after the checks, run each spec of --conformance-list matching this expression (e.g. .) with upstream's e2e.test")
	flag.StringVar(&o.specList, "conformance-list", "", "the specs --conformance picks from (default test/conformance/node.txt: those make conformance leaves to a real node)")
	flag.StringVar(&o.containerd, "containerd", "", "the node's containerd (default Debian's; hack/tools/build.sh containerd containerd-shim-runc-v2 builds containerd 2, whose CDI the DRA specs of test/conformance/dra.txt need)")
	flag.IntVar(&o.parallel, "conformance-parallel", 3, "specs --conformance runs at a time (each in its own e2e.test process and namespaces)")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if err := run(o); err != nil {
		log.Printf("e2e-node: FAIL: %v", err)
		os.Exit(1)
	}
	log.Printf("e2e-node: PASS")
}

func run(o options) (err error) {
	if os.Geteuid() != 0 {
		return errors.New("must run as root (it starts containerd and a kubelet)")
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	if o.binDir == "" {
		o.binDir = filepath.Join(root, "_output", "bin")
	}
	if o.workDir == "" {
		o.workDir = filepath.Join(root, "_output", "e2e-node")
	}
	if o.containerd != "" {
		if o.containerd, err = filepath.Abs(o.containerd); err != nil {
			return err
		}
		if _, err := os.Stat(o.containerd); err != nil {
			return fmt.Errorf("--containerd: %w (hack/tools/build.sh containerd containerd-shim-runc-v2)", err)
		}
	}
	for _, b := range append(node.NodeBinaries, "kubectl") {
		if _, err := os.Stat(filepath.Join(o.binDir, b)); err != nil {
			return fmt.Errorf("%s missing: hack/tools/build.sh kubectl %s", b, "kubelet kube-proxy agnhost coredns pause")
		}
	}
	if err := node.EnsurePackages(log.Printf); err != nil {
		return err
	}
	hostname, err := os.Hostname()
	if err != nil {
		return err
	}

	// Signals cancel the run; the teardown below always runs.
	ctx, cancel := node.RunContext("e2e-node", o.timeout)
	defer cancel()

	started := time.Now()
	n, err := node.New(node.Config{
		Dir: o.nodeDir, LogDir: filepath.Join(o.workDir, "logs"), BinDir: o.binDir,
		Name: hostname, ClusterDNS: dnsIP, Containerd: o.containerd, Logf: log.Printf,
	})
	if err != nil {
		return err
	}
	var c *cluster.Cluster
	defer func() {
		t := time.Now()
		terr := teardown(c, n)
		log.Printf("e2e-node: teardown took %v", time.Since(t).Round(time.Millisecond))
		err = errors.Join(err, terr)
	}()

	kcm := cluster.OurControllerManager
	if o.upstream {
		kcm = cluster.UpstreamControllerManager
	}
	if o.kcm != "" {
		kcm = o.kcm
	}
	t := time.Now()
	c, err = cluster.Start(ctx, cluster.Options{
		WorkDir: o.workDir, BinDir: o.binDir, SkipKwok: true,
		// Pods reach the apiserver through the kubernetes Service, whose
		// endpoint is the advertise address: the node's, on the link
		// node.New made (none of the machine's own addresses).
		AdvertiseAddress:   n.IP,
		ExtraAPIServerArgs: []string{"--bind-address=0.0.0.0"},
		ControllerManager:  cluster.ControllerManagerOptions{Binary: kcm},
		Logf:               log.Printf,
	})
	if err != nil {
		return err
	}
	log.Printf("e2e-node: control plane with %s up in %v", kcm, time.Since(t).Round(time.Millisecond))
	n.CACertFile = c.PKI.CACert

	e := &env{
		Env: &checks.Env{
			Ctx: ctx, Client: c.Client, Kubectl: filepath.Join(o.binDir, "kubectl"), Kubeconfig: c.AdminKubeconfig,
			Namespace: ns, Logf: func(f string, args ...any) { log.Printf("e2e-node: "+f, args...) },
			TaintNode: hostname,
		},
		c: c, n: n, o: o, nodeName: hostname,
		server: "https://" + n.IP + ":" + strconv.Itoa(c.Ports.APIServer),
	}
	if e.dyn, err = dynamic.NewForConfig(c.RESTConfig); err != nil {
		return err
	}
	if err := e.all(); err != nil {
		return err
	}
	log.Printf("e2e-node: all checks passed in %v (%s)", time.Since(started).Round(time.Second), kcm)
	if o.conformance != "" {
		if err := e.runConformance(o.conformance); err != nil {
			return err
		}
	}
	if o.keep {
		log.Printf("e2e-node: --keep: export KUBECONFIG=%s; SIGINT tears down", c.AdminKubeconfig)
		<-ctx.Done()
	}
	return nil
}

// teardown stops the controller manager first (nothing recreates pods),
// then the node, the rest of the control plane, and cleans the machine.
func teardown(c *cluster.Cluster, n *node.Node) error {
	var errs []error
	if c != nil {
		if err := c.StopControllerManager(); err != nil {
			errs = append(errs, err)
		}
	}
	n.Stop()
	if c != nil {
		if err := c.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := n.Cleanup(); err != nil {
		errs = append(errs, err)
	}
	if err := n.Verify(); err != nil {
		errs = append(errs, err)
	} else {
		log.Printf("e2e-node: teardown verified: no process, mount, link, netns, iptables chain, cgroup, sysctl or path of the run is left")
	}
	return errors.Join(errs...)
}
