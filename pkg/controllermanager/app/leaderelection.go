package app

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// leaderHealthTimeout is how long past a missed renewal the leader
// election health check still passes (upstream's value).
const leaderHealthTimeout = 20 * time.Second

// leaderElectAndRun campaigns for the Lease and runs run while leading.
//
// Unlike upstream, SIGTERM (ctx cancelled) first stops the controllers,
// waiting up to --controller-shutdown-timeout, and only then releases the
// Lease, so a standby takes over within one retry period instead of a full
// lease duration, and never while the old leader's controllers still act.
// A lease lost any other way stops the process at once, as upstream does.
func leaderElectAndRun(ctx context.Context, c *Config, id string, recorder record.EventRecorder,
	checker *leaderelection.HealthzAdaptor, run func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	le := c.Component.Generic.LeaderElection
	lock, err := resourcelock.NewFromKubeconfig(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: recorder},
		c.Kubeconfig, le.RenewDeadline.Duration)
	if err != nil {
		return err
	}

	logger.Info("Campaigning for leadership", "lease", klog.KRef(le.ResourceNamespace, le.ResourceName), "identity", id)
	// The election has its own context: it ends when ctx ends and no
	// controllers run, or once they have stopped.
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	var (
		leading  atomic.Bool
		runErr   error
		runOnce  sync.Once
		finished = make(chan struct{})
	)
	go func() {
		<-ctx.Done()
		if !leading.Load() {
			stopElection()
		}
	}()

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		WatchDog:        checker,
		ReleaseOnCancel: true,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				leading.Store(true)
				// Controllers stop when the process is told to stop or
				// the lease is lost, whichever comes first.
				runCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				stop := context.AfterFunc(leadCtx, cancel)
				defer stop()
				err := run(runCtx)
				runOnce.Do(func() { runErr = err; close(finished) })
				stopElection()
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil && leading.Load() {
					logger.Error(nil, "Leader election lost")
					klog.FlushAndExit(klog.ExitFlushTimeout, 1)
				}
			},
			OnNewLeader: func(identity string) {
				if identity != id {
					logger.Info("New leader elected", "identity", identity)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	checker.SetLeaderElection(elector)
	elector.Run(electionCtx)
	if leading.Load() {
		<-finished
		logger.Info("Released the leader election lease", "lease", le.ResourceNamespace+"/"+le.ResourceName)
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}
