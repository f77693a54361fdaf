package app

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// leaderHealthTimeout is how long past a missed renewal the leader
// election health check still passes (upstream's value).
const leaderHealthTimeout = 20 * time.Second

// leaderElectAndRun campaigns for the Lease of c's leader election flags
// under identity id and runs run while leading (see election.run).
func leaderElectAndRun(ctx context.Context, c *Config, id string, recorder record.EventRecorder,
	checker *leaderelection.HealthzAdaptor, health *controllermanager.HealthHandler, run func(context.Context) error) error {
	le := c.Component.Generic.LeaderElection
	lock, err := resourcelock.NewFromKubeconfig(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: recorder},
		c.Kubeconfig, le.RenewDeadline.Duration)
	if err != nil {
		return err
	}
	e := election{lock: lock, config: le, candidacy: c.Candidacy, client: c.Client, checker: checker, health: health}
	return e.run(ctx, run)
}

// election is one process's leader election for one Lease.
type election struct {
	lock   resourcelock.Interface
	config componentbaseconfig.LeaderElectionConfiguration
	// candidacy, when set, makes the election coordinated: the process
	// announces itself in a LeaseCandidate and leads only once the
	// apiserver made it the Lease's holder. Nil: it takes a free Lease.
	candidacy *Candidacy
	client    kubernetes.Interface // publishes the LeaseCandidate
	checker   *leaderelection.HealthzAdaptor
	health    *controllermanager.HealthHandler
}

// run campaigns for the Lease and runs run while leading. It returns when
// ctx is cancelled (SIGTERM) and the controllers stopped, or when run
// returned.
//
// In a coordinated election (the CoordinatedLeaderElection gate, in
// kube-controller-manager only) the process never takes the Lease: it keeps
// a LeaseCandidate for it, which the apiserver's
// coordinated-leader-election controller reads to set the Lease's holder,
// and then only renews the Lease while it holds it. When that controller
// prefers another candidate (spec.preferredHolder) the leader stops
// renewing, and so loses the Lease within the renew deadline.
//
// Unlike upstream, SIGTERM (ctx cancelled) first stops the controllers,
// waiting up to --controller-shutdown-timeout, then deletes the
// LeaseCandidate if there is one, and only then releases the Lease, so a
// successor leads within a retry period instead of a full lease duration,
// and never while the old leader's controllers still act. A lease lost any
// other way, a preferred holder's included, stops the process at once with
// exit code 1, as upstream does; the Lease is left to expire. A standby in an
// uncoordinated election waits for that expiry itself (awaitExpiry) and so
// takes over sooner after a leader dies.
func (e *election) run(ctx context.Context, run func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	ns, name, id := e.config.ResourceNamespace, e.config.ResourceName, e.lock.Identity()

	// The election has its own context: it ends when ctx ends and no
	// controllers run, or once they have stopped.
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	var (
		mu       sync.Mutex
		ending   bool // this process ends the election: not a lost lease
		leading  bool // the controllers were started
		runErr   error
		finished = make(chan struct{}) // closed once run returned
	)
	end := func() {
		mu.Lock()
		ending = true
		mu.Unlock()
		stopElection()
	}
	isLeading := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return leading
	}
	stopWatch := context.AfterFunc(ctx, func() {
		if !isLeading() {
			end()
		}
	})
	defer stopWatch()

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          e.lock,
		LeaseDuration: e.config.LeaseDuration.Duration,
		RenewDeadline: e.config.RenewDeadline.Duration,
		RetryPeriod:   e.config.RetryPeriod.Duration,
		WatchDog:      e.checker,
		// Released by release below, once the controllers stopped.
		ReleaseOnCancel: false,
		Coordinated:     e.candidacy != nil,
		Name:            name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				if ending {
					mu.Unlock()
					return
				}
				leading = true
				mu.Unlock()
				// Controllers stop when the process is told to stop or
				// the lease is lost, whichever comes first.
				runCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				stop := context.AfterFunc(leadCtx, cancel)
				defer stop()
				runErr = run(runCtx)
				close(finished)
				end()
			},
			OnStoppedLeading: func() {
				mu.Lock()
				lost := leading && !ending
				mu.Unlock()
				if lost {
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
	if e.checker != nil {
		e.checker.SetLeaderElection(elector)
	}
	var cand *candidate
	if e.candidacy != nil {
		if cand, err = startCandidate(ctx, e.client, ns, name, id, e.candidacy, e.health); err != nil {
			return err
		}
	}

	logger.Info("Campaigning for leadership", "lease", klog.KRef(ns, name), "identity", id, "coordinated", cand != nil)
	if cand == nil {
		e.awaitExpiry(electionCtx)
	}
	elector.Run(electionCtx)

	mu.Lock()
	ending = true
	wasLeading := leading
	mu.Unlock()
	if wasLeading {
		<-finished
	}
	cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.config.RenewDeadline.Duration)
	defer cancel()
	if cand != nil {
		cand.stop(cleanupCtx)
	}
	if released, err := release(cleanupCtx, e.lock); err != nil {
		logger.Error(err, "Could not release the leader election lease", "lease", klog.KRef(ns, name))
	} else if released {
		logger.Info("Released the leader election lease", "lease", klog.KRef(ns, name))
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}

// release gives the Lease up if lock's identity holds it, as client-go's
// ReleaseOnCancel does (no holder, a one-second duration), and reports
// whether it did.
func release(ctx context.Context, lock resourcelock.Interface) (bool, error) {
	released := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		held, _, err := lock.Get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if held.HolderIdentity != lock.Identity() {
			return nil
		}
		now := metav1.Now()
		if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{
			LeaderTransitions:    held.LeaderTransitions,
			LeaseDurationSeconds: 1,
			RenewTime:            now,
			AcquireTime:          now,
		}); err != nil {
			return err
		}
		released = true
		return nil
	})
	return released, err
}
