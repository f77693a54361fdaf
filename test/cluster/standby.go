package cluster

import (
	"context"
	"fmt"
	"strconv"
)

// ControllerManagerStandby is a second controller manager beside the
// leader, for failover measurements (StartStandbyControllerManager).
const ControllerManagerStandby Component = "kube-controller-manager-standby"

// StartStandbyControllerManager starts a second controller manager with the
// options the leader was last started with, on a port of its own, and
// waits until its /healthz answers. It campaigns for the same Lease, so it
// waits as a standby while the leader holds it. It returns its port.
func (c *Cluster) StartStandbyControllerManager(ctx context.Context) (int, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if p := c.proc(ControllerManagerStandby); p != nil && !p.exited() {
		return 0, fmt.Errorf("cluster: a standby controller manager already runs (pid %d)", p.pid())
	}
	ports, err := allocatePorts(1)
	if err != nil {
		return 0, err
	}
	// The leader's identity, which the successor's must replace.
	leader, err := c.leaseHolder(ctx, c.kcm.leaseNamespace, c.kcm.leaseName)
	if err != nil {
		return 0, err
	}
	o := c.kcm.opts
	bin := c.opts.binary(o.Binary, OurControllerManager)
	// The last --secure-port wins.
	args := c.ControllerManagerArgs(append(append([]string(nil), o.ExtraArgs...), "--secure-port="+strconv.Itoa(ports[0]))...)
	c.opts.Logf("cluster: starting %s %s on 127.0.0.1:%d", ControllerManagerStandby, bin, ports[0])
	p, err := c.start(ControllerManagerStandby, bin, args)
	if err != nil {
		return 0, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, string(ControllerManagerStandby)+" /healthz", p, httpOK(insecureHTTP(), url)); err != nil {
		return 0, fmt.Errorf("cluster: standby not healthy: %w", err)
	}
	c.standbyPort, c.standbyPrev = ports[0], leader
	return ports[0], nil
}

// PromoteStandby makes the standby the cluster's controller manager once
// the leader is gone: ControllerManagerRunning, PID(ControllerManager),
// ControllerManagerPort and WaitForControllerManagerLeader then follow it.
// The old leader's log stays in its file; the standby's keeps its own.
func (c *Cluster) PromoteStandby() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	p := c.proc(ControllerManagerStandby)
	if p == nil || p.exited() {
		return fmt.Errorf("cluster: no standby controller manager runs")
	}
	if old := c.proc(ControllerManager); old != nil && !old.exited() {
		return fmt.Errorf("cluster: the leader (pid %d) still runs", old.pid())
	}
	c.mu.Lock()
	c.procs[ControllerManager] = p
	delete(c.procs, ControllerManagerStandby)
	c.mu.Unlock()
	c.kcmPort, c.standbyPort = c.standbyPort, 0
	c.kcm.prevHolder = c.standbyPrev
	return nil
}

// ControllerManagerPort is the HTTPS port of the cluster's controller
// manager: Ports.ControllerManager until a standby was promoted.
func (c *Cluster) ControllerManagerPort() int {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if c.kcmPort != 0 {
		return c.kcmPort
	}
	return c.Ports.ControllerManager
}
