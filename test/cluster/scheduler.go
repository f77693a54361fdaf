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
