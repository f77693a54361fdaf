package chaos

import (
	"context"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// restart restarts etcd and then kube-apiserver, each with SIGTERM and its
// same command line (cluster.RestartEtcd, cluster.RestartAPIServer), when
// the scenario's steps are done and the controllers are still settling.
// It is not done during the steps because the harness's own requests
// (applies, waits) would fail with the apiserver gone and the step failure
// would show in the capture as a difference of the harness, not of the
// controller manager.
type restart struct{}

func (restart) Name() string { return "restart" }

func (restart) Configure(*cluster.Options) error { return nil }

func (restart) Start(_ context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	return &restartRun{c: c, logf: logf}, nil
}

type restartRun struct {
	c                 *cluster.Cluster
	logf              func(string, ...any)
	etcd, api, kcmRes float64
}

func (r *restartRun) End(ctx context.Context) error {
	d, err := r.c.RestartEtcd(ctx)
	if err != nil {
		return err
	}
	r.etcd = d.Seconds()
	r.logf("chaos: restart: etcd back after %s", d)
	if d, err = r.c.RestartAPIServer(ctx); err != nil {
		return err
	}
	r.api = d.Seconds()
	r.logf("chaos: restart: kube-apiserver ready after %s", d)
	restarted, err := ensureLeader(ctx, r.c, r.c.Options().ControllerManager, r.logf)
	if restarted {
		r.kcmRes = 1
	}
	return err
}

func (r *restartRun) Close() error { return nil }

func (r *restartRun) figures() map[string]float64 {
	return map[string]float64{"etcd-down-s": r.etcd, "apiserver-down-s": r.api, "kcm-restarted": r.kcmRes}
}
