package chaos

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// crash SIGKILLs the controller manager a seeded 2-8 s after it (last)
// took the Lease, starts it again, and repeats: kills times, or a seeded 3
// to 5 when kills is 0. A killed leader does not release its Lease, so each
// successor waits out the lease duration (15 s) before it leads: the kills
// land in the controllers' work, not in the wait for the Lease. Not sooner
// than 2 s: upstream's binary starts its controllers only once it leads and
// needs a few seconds before they act, so with kills 1-4 s apart (tried
// first) upstream's control never got a namespace's default ServiceAccount
// made. The kills run beside the scenario's steps; End waits for the last
// of them.
type crash struct {
	seed  int64
	kills int
}

func (*crash) Name() string { return "crash" }

func (*crash) Configure(*cluster.Options) error { return nil }

func (f *crash) Start(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	rng := rand.New(rand.NewSource(f.seed))
	n := f.kills
	if n <= 0 {
		n = 3 + rng.Intn(3)
	}
	r := &crashRun{c: c, logf: logf, done: make(chan struct{})}
	go r.loop(ctx, rng, n)
	return r, nil
}

type crashRun struct {
	c    *cluster.Cluster
	logf func(string, ...any)
	done chan struct{}

	mu    sync.Mutex
	kills int
	err   error
}

func (r *crashRun) loop(ctx context.Context, rng *rand.Rand, n int) {
	defer close(r.done)
	opts := r.c.Options().ControllerManager
	for i := 0; i < n; i++ {
		delay := 2*time.Second + time.Duration(rng.Int63n(int64(6*time.Second)))
		select {
		case <-ctx.Done():
			r.fail(ctx.Err())
			return
		case <-time.After(delay):
		}
		r.logf("chaos: crash: SIGKILL %d of %d", i+1, n)
		if err := killAndRestart(ctx, r.c, opts, func() {
			r.mu.Lock()
			r.kills++
			r.mu.Unlock()
		}); err != nil {
			r.fail(err)
			return
		}
	}
}

// killAndRestart SIGKILLs the controller manager, calls killed, starts it
// again with opts, as a kubelet restarts its static pod, and waits until
// it leads.
func killAndRestart(ctx context.Context, c *cluster.Cluster, opts cluster.ControllerManagerOptions, killed func()) error {
	if err := c.KillControllerManager(); err != nil {
		return err
	}
	killed()
	if err := c.StartControllerManagerWith(ctx, opts); err != nil {
		return err
	}
	return c.WaitForControllerManagerLeader(ctx)
}

func (r *crashRun) fail(err error) {
	r.mu.Lock()
	r.err = errors.Join(r.err, err)
	r.mu.Unlock()
}

func (r *crashRun) End(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *crashRun) Close() error { return nil }

func (r *crashRun) figures() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return map[string]float64{"kills": float64(r.kills)}
}
