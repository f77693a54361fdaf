package cluster

import (
	"context"
	"fmt"
	"strconv"
)

// schedulerArgs is kubeadm's kube-scheduler command line with local paths.
func (c *Cluster) schedulerArgs() []string {
	args := []string{
		"--authentication-kubeconfig=" + c.SchedulerKubeconfig,
		"--authorization-kubeconfig=" + c.SchedulerKubeconfig,
		"--bind-address=127.0.0.1",
		"--kubeconfig=" + c.SchedulerKubeconfig,
		"--leader-elect=true",
		"--secure-port=" + strconv.Itoa(c.Ports.Scheduler),
	}
	return append(args, c.opts.ExtraSchedulerArgs...)
}

func (c *Cluster) startScheduler() (*process, error) {
	return c.start(Scheduler, c.opts.Scheduler, c.schedulerArgs())
}

func (c *Cluster) waitScheduler(ctx context.Context, p *process) error {
	url := "https://127.0.0.1:" + strconv.Itoa(c.Ports.Scheduler) + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, "kube-scheduler /healthz", p, httpOK(insecureHTTP(), url)); err != nil {
		return fmt.Errorf("cluster: kube-scheduler not ready: %w", err)
	}
	return nil
}

// EnsureScheduler starts kube-scheduler again, with the command line it
// was started with, if it has exited (a lost Lease ends it, as it ends
// the controller manager), and waits for its /healthz: what a kubelet does
// for its static pod. It reports whether it had to.
func (c *Cluster) EnsureScheduler(ctx context.Context) (bool, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	p := c.proc(Scheduler)
	if p == nil || !p.exited() {
		return false, nil
	}
	c.opts.Logf("cluster: kube-scheduler exited; starting it again")
	np, err := c.start(Scheduler, p.path, p.args)
	if err != nil {
		return true, err
	}
	return true, c.waitScheduler(ctx, np)
}
