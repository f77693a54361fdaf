package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// CloudControllerManager is the optional cloud-controller-manager process
// (Options.CloudControllerManager), also its log file's name.
const CloudControllerManager Component = "cloud-controller-manager"

// defaultCloudLeaseName is upstream cloud-controller-manager's Lease.
const defaultCloudLeaseName = "cloud-controller-manager"

// CloudControllerManagerOptions runs a cloud-controller-manager beside
// kube-controller-manager: any binary with upstream cloud-controller-manager's
// command line (or kube-controller-manager's, given the flags to run only
// the cloud controllers under their own Lease).
type CloudControllerManagerOptions struct {
	// Binary is a name in BinDir or a path; empty means no
	// cloud-controller-manager.
	Binary string
	// ExtraArgs are appended to CloudControllerManagerArgs' command line;
	// --cloud-provider at least.
	ExtraArgs []string
}

// CloudControllerManagerArgs returns the cloud-controller-manager command
// line for this cluster, followed by extra: the cluster's name and pod
// range, serving on Ports.CloudControllerManager with kube-controller-manager's
// delegated authentication, and the admin's credentials (the test
// providers write their state with the client they are given, which no
// bootstrap role allows).
func (c *Cluster) CloudControllerManagerArgs(extra ...string) []string {
	p := c.PKI
	args := []string{
		"--authentication-kubeconfig=" + c.ControllerManagerKubeconfig,
		"--authorization-kubeconfig=" + c.ControllerManagerKubeconfig,
		"--bind-address=127.0.0.1",
		"--client-ca-file=" + p.CACert,
		"--cluster-cidr=" + c.clusterCIDRs(),
		"--cluster-name=" + c.opts.ClusterName,
		"--kubeconfig=" + c.AdminKubeconfig,
		"--leader-elect=true",
		"--requestheader-client-ca-file=" + p.FrontProxyCACert,
		"--secure-port=" + strconv.Itoa(c.Ports.CloudControllerManager),
		"--use-service-account-credentials=false",
	}
	return append(args, extra...)
}

// StartCloudControllerManager starts the cloud-controller-manager of
// Options.CloudControllerManager and waits until its /healthz answers 200.
func (c *Cluster) StartCloudControllerManager(ctx context.Context) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	return c.startCloudControllerManager(ctx)
}

func (c *Cluster) startCloudControllerManager(ctx context.Context) error {
	o := c.opts.CloudControllerManager
	if o.Binary == "" {
		return errors.New("cluster: no cloud-controller-manager configured")
	}
	if p := c.proc(CloudControllerManager); p != nil && !p.exited() {
		return fmt.Errorf("cluster: cloud-controller-manager already running (pid %d)", p.pid())
	}
	bin := c.opts.binary(o.Binary, "")
	if err := checkExecutable(bin); err != nil {
		return err
	}
	args := c.CloudControllerManagerArgs(o.ExtraArgs...)
	opts := ControllerManagerOptions{Binary: o.Binary, ExtraArgs: o.ExtraArgs}
	return c.launchManager(ctx, CloudControllerManager, &c.ccm, opts, bin, args, defaultCloudLeaseName, c.Ports.CloudControllerManager)
}

// StopCloudControllerManager stops the cloud-controller-manager as
// StopControllerManager does kube-controller-manager's.
func (c *Cluster) StopCloudControllerManager() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if p := c.proc(CloudControllerManager); p != nil {
		return p.stop(c.opts.StopTimeout)
	}
	return nil
}

// RestartCloudControllerManager stops the cloud-controller-manager
// (SIGTERM) and starts it again.
func (c *Cluster) RestartCloudControllerManager(ctx context.Context) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if p := c.proc(CloudControllerManager); p != nil {
		if err := p.stop(c.opts.StopTimeout); err != nil {
			return err
		}
	}
	return c.startCloudControllerManager(ctx)
}

// WaitForCloudControllerManagerLeader is WaitForControllerManagerLeader for
// the cloud-controller-manager's Lease.
func (c *Cluster) WaitForCloudControllerManagerLeader(ctx context.Context) error {
	c.opMu.Lock()
	st := c.ccm
	p := c.proc(CloudControllerManager)
	c.opMu.Unlock()
	if p == nil {
		return errors.New("cluster: no cloud-controller-manager was started")
	}
	return c.waitLeader(ctx, st, p, "cloud-controller-manager")
}
