package app

import (
	"bytes"
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// takeoverJitter spreads a standby's reads of the Lease: up to 10% of the
// retry period on top of it (client-go's candidates wait up to 120%).
const takeoverJitter = 0.1

// awaitExpiry is how a standby in an uncoordinated election waits for the
// Lease: it returns once the Lease is free, missing or held by this
// process, or after it took over a Lease nobody renewed for its duration.
// client-go's elector then runs from a Lease it holds or can take at once.
//
// Why not leave the wait to client-go: its candidate reads the Lease every
// retry period plus up to 120% jitter (2 to 4.4 s by default) and counts a
// Lease's duration from the read that first saw the last renewal, then
// notices the expiry only at its next read. After the leader is killed the
// successor so leads between 15 and about 24 s later with the default 15 s
// duration. Here the Lease is read every retry period plus at most 10%, and
// once more just after the same record has been seen for the Lease's
// duration, when it is taken over: at most a duration plus 1.1 retry
// periods (17.2 s) after the leader's last renewal. The rule is client-go's,
// by the reader's own clock, never the holder's RenewTime, so clock skew
// cannot make two leaders; a concurrent taker loses on the Lease's
// resourceVersion.
func (e *election) awaitExpiry(ctx context.Context) {
	logger := klog.FromContext(ctx)
	id := e.lock.Identity()
	var (
		seen   []byte    // the record last read
		seenAt time.Time // when it was first read
	)
	for {
		var expires time.Time // seenAt plus the record's duration, held by another
		rec, raw, err := e.lock.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			logger.V(2).Info("Could not read the leader election lease", "lease", e.lock.Describe(), "err", err)
		case rec.HolderIdentity == "" || rec.HolderIdentity == id:
			return
		case !bytes.Equal(raw, seen):
			seen, seenAt = raw, time.Now()
			expires = seenAt.Add(leaseDuration(rec))
		case time.Since(seenAt) > leaseDuration(rec):
			if e.takeOver(ctx, rec) {
				logger.Info("Took over an expired leader election lease", "lease", e.lock.Describe(),
					"previousHolder", rec.HolderIdentity, "unchangedFor", time.Since(seenAt).Round(time.Millisecond))
				return
			}
		default:
			expires = seenAt.Add(leaseDuration(rec))
		}
		// The next read: a retry period on, or just after the expiry if
		// that comes sooner, so the expiry is not noticed a period late.
		next := wait.Jitter(e.config.RetryPeriod.Duration, takeoverJitter)
		if !expires.IsZero() {
			next = min(next, time.Until(expires)+expiryMargin)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

// expiryMargin is how long after a Lease's expiry a standby reads it.
const expiryMargin = 10 * time.Millisecond

func leaseDuration(rec *resourcelock.LeaderElectionRecord) time.Duration {
	return time.Duration(rec.LeaseDurationSeconds) * time.Second
}

// takeOver writes this process into the Lease last read, as client-go's
// elector does when it acquires one: its identity and duration, acquire and
// renew time now, one more transition. The write carries the read's
// resourceVersion, so it fails if anyone wrote the Lease since.
func (e *election) takeOver(ctx context.Context, old *resourcelock.LeaderElectionRecord) bool {
	now := metav1.NewTime(time.Now())
	err := e.lock.Update(ctx, resourcelock.LeaderElectionRecord{
		HolderIdentity:       e.lock.Identity(),
		LeaseDurationSeconds: int(e.config.LeaseDuration.Duration / time.Second),
		AcquireTime:          now,
		RenewTime:            now,
		LeaderTransitions:    old.LeaderTransitions + 1,
	})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Could not take over the leader election lease", "lease", e.lock.Describe(), "err", err)
		return false
	}
	return true
}
