package chaos

import (
	"context"
	"math/rand"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// crashSteps SIGKILLs the controller manager inside the controllers' work
// of each step: after the scenario's objects are applied and after every
// step that changes the cluster (apply, create, patch, scale, set image,
// delete, evict, nodes), a seeded 0-1.5 s later, while the controllers
// react to it. It starts the controller manager again and waits until it
// leads; with kills > 1 it kills the successor too, a seeded 0-1.5 s after
// it leads (while it resumes the work), kills times per step in all. Then
// the next step runs. A scenario whose objects and k steps change the
// cluster takes (k+1) × kills kills per run, each seed at other moments.
//
// A SIGKILLed leader does not release its Lease, so every kill would cost
// the successor the 15 s default lease duration: the faulted run takes a
// 4 s lease (renew deadline 3 s, retry 1 s), the same for kcm and for
// upstream's control, which changes when the successor leads and nothing
// else.
type crashSteps struct {
	seed  int64
	kills int // per step; 0 means 1
}

// crashStepsLease are the faulted runs' leader-election flags.
var crashStepsLease = []string{
	"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
}

// maxStepKillDelay bounds how long after a step the kill comes.
const maxStepKillDelay = 1500 * time.Millisecond

func (*crashSteps) Name() string { return "crash-steps" }

func (*crashSteps) Configure(o *cluster.Options) error {
	o.ControllerManager.ExtraArgs = append(append([]string(nil), o.ControllerManager.ExtraArgs...), crashStepsLease...)
	return nil
}

func (f *crashSteps) Start(_ context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	return &crashStepsRun{c: c, logf: logf, rng: rand.New(rand.NewSource(f.seed)), perStep: max(f.kills, 1)}, nil
}

type crashStepsRun struct {
	c    *cluster.Cluster
	logf func(string, ...any)
	rng  *rand.Rand
	// perStep kills follow each step that changes the cluster.
	perStep int
	// kills is only touched by the steps' goroutine (AfterStep, then End
	// and figures), so it needs no lock.
	kills int
}

// mutates says whether a step changes the cluster (nil: the objects).
func mutates(st *parity.Step) bool {
	if st == nil {
		return true
	}
	return st.Apply != nil || st.Create != nil || st.Patch != nil || st.Scale != nil ||
		st.SetImage != nil || st.Delete != nil || st.Evict != nil || st.Nodes != nil
}

func (r *crashStepsRun) AfterStep(ctx context.Context, i int, st *parity.Step) error {
	// A scenario that stops the controller manager itself is left alone
	// until it starts it again.
	if !mutates(st) || !r.c.ControllerManagerRunning() {
		return nil
	}
	opts := r.c.Options().ControllerManager
	for k := range r.perStep {
		delay := time.Duration(r.rng.Int63n(int64(maxStepKillDelay)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		r.logf("chaos: crash-steps: SIGKILL %d of %d, %s after step %d (or its successor's lead)", k+1, r.perStep, delay.Round(time.Millisecond), i+1)
		if err := killAndRestart(ctx, r.c, opts, func() { r.kills++ }); err != nil {
			return err
		}
	}
	return nil
}

func (r *crashStepsRun) End(context.Context) error { return nil }

func (r *crashStepsRun) Close() error { return nil }

func (r *crashStepsRun) figures() map[string]float64 {
	return map[string]float64{"kills": float64(r.kills)}
}
