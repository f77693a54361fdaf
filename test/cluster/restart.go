package cluster

import (
	"context"
	"fmt"
	"time"
)

// RestartAPIServer stops kube-apiserver (SIGTERM, SIGKILL after
// Options.StopTimeout) and starts it again with the same binary and command
// line, then waits for /readyz as Start does. Clients (the controller
// manager, kwok, the scheduler) keep running and see the apiserver vanish
// and come back, as in a control-plane upgrade. It returns how long the
// apiserver was unavailable.
func (c *Cluster) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	return c.restart(ctx, APIServer, "kube-apiserver /readyz", c.apiServerReady)
}

// RestartEtcd stops etcd (SIGTERM, SIGKILL after Options.StopTimeout) and
// starts it again with the same command line and data dir, then waits for
// its /health. The apiserver stays up and reconnects; its watches on etcd
// are cut.
func (c *Cluster) RestartEtcd(ctx context.Context) (time.Duration, error) {
	return c.restart(ctx, Etcd, "etcd /health", httpOK(insecureHTTP(), c.etcdURL()+"/health"))
}

// restart stops a running component and starts it with the arguments it was
// last started with.
func (c *Cluster) restart(ctx context.Context, name Component, what string, ready condition) (time.Duration, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	p := c.proc(name)
	if p == nil {
		return 0, fmt.Errorf("cluster: %s was never started", name)
	}
	start := time.Now()
	c.opts.Logf("cluster: restarting %s (pid %d)", name, p.pid())
	if err := p.stop(c.opts.StopTimeout); err != nil {
		return 0, err
	}
	np, err := c.start(name, p.path, p.args)
	if err != nil {
		return 0, err
	}
	if err := waitFor(ctx, c.opts.StartTimeout, what, np, ready); err != nil {
		return 0, fmt.Errorf("cluster: %s not ready after restart: %w", name, err)
	}
	return time.Since(start), nil
}
