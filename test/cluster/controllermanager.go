package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Leader-election defaults of kube-controller-manager.
const (
	defaultLeaseName      = "kube-controller-manager"
	defaultLeaseNamespace = "kube-system"
)

// ControllerManagerArgs returns kubeadm's kube-controller-manager command
// line for this cluster (the static pod kubeadm and kind write),
// followed by extra.
func (c *Cluster) ControllerManagerArgs(extra ...string) []string {
	p := c.PKI
	args := []string{
		"--allocate-node-cidrs=true",
		"--authentication-kubeconfig=" + c.ControllerManagerKubeconfig,
		"--authorization-kubeconfig=" + c.ControllerManagerKubeconfig,
		"--bind-address=127.0.0.1",
		"--client-ca-file=" + p.CACert,
		"--cluster-cidr=" + c.clusterCIDRs(),
		"--cluster-name=" + c.opts.ClusterName,
		"--cluster-signing-cert-file=" + p.CACert,
		"--cluster-signing-key-file=" + p.CAKey,
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--kubeconfig=" + c.ControllerManagerKubeconfig,
		"--leader-elect=true",
		"--requestheader-client-ca-file=" + p.FrontProxyCACert,
		"--root-ca-file=" + p.CACert,
		"--secure-port=" + strconv.Itoa(c.Ports.ControllerManager),
		"--service-account-private-key-file=" + p.SAKey,
		"--service-cluster-ip-range=" + c.serviceCIDRs(),
		"--use-service-account-credentials=true",
	}
	return append(args, extra...)
}

// StartControllerManager starts kube-controller-manager as configured in
// Options.ControllerManager and waits until its /healthz answers 200. That
// only means it serves: upstream's controllers keep starting for seconds
// afterwards, and after a restart it may wait a lease duration for the
// Lease; see WaitForControllerManagerLeader.
func (c *Cluster) StartControllerManager(ctx context.Context) error {
	return c.StartControllerManagerWith(ctx, c.opts.ControllerManager)
}

// StartControllerManagerWith is StartControllerManager with another binary or
// extra arguments (Disabled is ignored). Only one controller manager runs at
// a time; it listens on Ports.ControllerManager whatever the binary.
func (c *Cluster) StartControllerManagerWith(ctx context.Context, o ControllerManagerOptions) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	return c.startControllerManager(ctx, o)
}

func (c *Cluster) startControllerManager(ctx context.Context, o ControllerManagerOptions) error {
	if p := c.proc(ControllerManager); p != nil && !p.exited() {
		return fmt.Errorf("cluster: kube-controller-manager already running (pid %d)", p.pid())
	}
	bin := c.opts.binary(o.Binary, OurControllerManager)
	if err := checkExecutable(bin); err != nil {
		return err
	}
	args := c.ControllerManagerArgs(o.ExtraArgs...)
	return c.launchManager(ctx, ControllerManager, &c.kcm, o, bin, args, defaultLeaseName, c.Ports.ControllerManager)
}

// launchManager starts a controller manager (name: kcm's kind or the cloud
// one) and waits for its /healthz on port. It first records in st who
// holds the Lease the arguments name (defaultLease unless
// --leader-elect-resource-name says otherwise), so that a wait for the
// leader can tell the new process taking it over.
func (c *Cluster) launchManager(ctx context.Context, name Component, st *kcmState, o ControllerManagerOptions, bin string, args []string, defaultLease string, port int) error {
	ns, lease, elect := leaderElectionWithDefault(args, defaultLease)
	prev, err := c.leaseHolder(ctx, ns, lease)
	if err != nil {
		return err
	}
	*st = kcmState{opts: o, leaseNamespace: ns, leaseName: lease, leaderElect: elect, prevHolder: prev}

	c.opts.Logf("cluster: starting %s %s", name, bin)
	p, err := c.start(name, bin, args)
	if err != nil {
		return err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, string(name)+" /healthz", p, httpOK(insecureHTTP(), url)); err != nil {
		return fmt.Errorf("cluster: %s not healthy: %w", name, err)
	}
	return nil
}

// StopControllerManager sends SIGTERM to the controller manager and waits for
// it to exit, sending SIGKILL after Options.StopTimeout. Not running is not
// an error.
func (c *Cluster) StopControllerManager() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if p := c.proc(ControllerManager); p != nil {
		return p.stop(c.opts.StopTimeout)
	}
	return nil
}

// KillControllerManager sends SIGKILL to the controller manager and waits for
// it to be reaped. Not running is not an error.
func (c *Cluster) KillControllerManager() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if p := c.proc(ControllerManager); p != nil {
		return p.kill()
	}
	return nil
}

// RestartControllerManager stops the controller manager (SIGTERM) and starts
// it again with the options it was last started with (Options.ControllerManager
// if never started).
func (c *Cluster) RestartControllerManager(ctx context.Context) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	o := c.opts.ControllerManager
	if p := c.proc(ControllerManager); p != nil {
		if err := p.stop(c.opts.StopTimeout); err != nil {
			return err
		}
		o = c.kcm.opts
	}
	return c.startControllerManager(ctx, o)
}

// ControllerManagerRunning reports whether a controller manager process is
// alive.
func (c *Cluster) ControllerManagerRunning() bool {
	p := c.proc(ControllerManager)
	return p != nil && !p.exited()
}

// WaitForControllerManagerLeader waits until the most recently started
// controller manager holds its leader-election Lease, that is until the Lease
// names a holder other than the one it named before that start. It returns at
// once if --leader-elect=false was passed. The wait is bounded by ctx and
// Options.StartTimeout.
func (c *Cluster) WaitForControllerManagerLeader(ctx context.Context) error {
	c.opMu.Lock()
	st := c.kcm
	p := c.proc(ControllerManager)
	c.opMu.Unlock()
	if p == nil {
		return errors.New("cluster: no kube-controller-manager was started")
	}
	return c.waitLeader(ctx, st, p, "kube-controller-manager")
}

// waitLeader waits until the Lease st names names a holder other than the
// one it named before p started.
func (c *Cluster) waitLeader(ctx context.Context, st kcmState, p *process, component string) error {
	if !st.leaderElect {
		return nil
	}
	what := fmt.Sprintf("Lease %s/%s taken by the new %s", st.leaseNamespace, st.leaseName, component)
	return waitFor(ctx, c.opts.StartTimeout, what, p, func(ctx context.Context) (bool, error) {
		h, err := c.leaseHolder(ctx, st.leaseNamespace, st.leaseName)
		if err != nil {
			return false, err
		}
		if h == "" || h == st.prevHolder {
			return false, fmt.Errorf("holder is %q", h)
		}
		return true, nil
	})
}

// kcmState is what the last StartControllerManager learned.
type kcmState struct {
	opts                      ControllerManagerOptions
	leaseNamespace, leaseName string
	leaderElect               bool
	prevHolder                string
}

// leaseHolder returns the Lease's holder identity, "" if there is no Lease.
func (c *Cluster) leaseHolder(ctx context.Context, namespace, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := c.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cluster: get Lease %s/%s: %w", namespace, name, err)
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

// leaderElection reads the effective leader-election flags from a command
// line (the last occurrence of a flag wins, as with pflag). Values must be
// given as --flag=value.
func leaderElection(args []string) (namespace, name string, elect bool) {
	return leaderElectionWithDefault(args, defaultLeaseName)
}

// leaderElectionWithDefault is leaderElection for a binary whose Lease is
// named defName by default.
func leaderElectionWithDefault(args []string, defName string) (namespace, name string, elect bool) {
	namespace, name, elect = defaultLeaseNamespace, defName, true
	for _, a := range args {
		k, v, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch k {
		case "leader-elect":
			elect = v != "false"
		case "leader-elect-resource-name":
			name = v
		case "leader-elect-resource-namespace":
			namespace = v
		}
	}
	return namespace, name, elect
}
