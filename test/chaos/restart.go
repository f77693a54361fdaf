package chaos

import (
	"context"
	"math/rand"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// restart restarts etcd and then kube-apiserver, each with SIGTERM and its
// same command line (cluster.RestartEtcd, cluster.RestartAPIServer), in the
// middle of the controllers' work: a seeded 0-1.5 s after the first step
// that changes the cluster after the scenario's objects (usually the apply
// that gives the controllers their work), or, in a scenario without one,
// after its steps, while the controllers settle. The steps wait meanwhile (the hook runs between
// them), so the harness's own applies and waits never meet the apiserver
// gone and a difference in the capture is the controller manager's. The
// controller manager usually loses its Lease while the apiserver is down
// (7-25 s to be ready on a busy 2-core machine), and so does kube-scheduler;
// each is started again, as a kubelet would restart its static pod.
type restart struct {
	seed int64
}

func (restart) Name() string { return "restart" }

func (restart) Configure(*cluster.Options) error { return nil }

func (f restart) Start(_ context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	return &restartRun{c: c, logf: logf, rng: rand.New(rand.NewSource(f.seed))}, nil
}

type restartRun struct {
	c    *cluster.Cluster
	logf func(string, ...any)
	rng  *rand.Rand
	// done says the restart happened; only the steps' goroutine (then
	// End) touches it.
	done              bool
	etcd, api, kcmRes float64
	schedRes          float64
}

func (r *restartRun) AfterStep(ctx context.Context, i int, st *parity.Step) error {
	// st nil is the objects: the restart waits for a step after them.
	if r.done || st == nil || !mutates(st) || !r.c.ControllerManagerRunning() {
		return nil
	}
	delay := time.Duration(r.rng.Int63n(int64(maxStepKillDelay)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(delay):
	}
	r.logf("chaos: restart: %s after step %d", delay.Round(time.Millisecond), i+1)
	return r.restart(ctx)
}

// End restarts now if no step after the objects changed the cluster.
func (r *restartRun) End(ctx context.Context) error {
	if r.done {
		return nil
	}
	r.logf("chaos: restart: no step changed the cluster after the objects; restarting after the steps")
	return r.restart(ctx)
}

func (r *restartRun) restart(ctx context.Context) error {
	r.done = true
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
	if err != nil {
		return err
	}
	// kube-scheduler loses its Lease too and exits; in the middle of the
	// steps its pods would stay Pending.
	restarted, err = r.c.EnsureScheduler(ctx)
	if restarted {
		r.schedRes = 1
	}
	return err
}

func (r *restartRun) Close() error { return nil }

func (r *restartRun) figures() map[string]float64 {
	return map[string]float64{"etcd-down-s": r.etcd, "apiserver-down-s": r.api, "kcm-restarted": r.kcmRes, "scheduler-restarted": r.schedRes}
}
