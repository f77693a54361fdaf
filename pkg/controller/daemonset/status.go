package daemonset

import (
	"context"
	"fmt"
	"slices"
	"time"

	apps "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// counts are the status fields the controller computes.
type counts struct {
	desired, current, misscheduled, ready, updated, available int32
}

// calculateCounts counts, over the nodes: those that should run the pod
// (desired), of those the ones that have one (current), whose oldest pod
// is ready, available or of the current template; and the nodes that
// have a pod they should not run (misscheduled).
func (c *Controller) calculateCounts(s *syncState) counts {
	var n counts
	for i, node := range s.nodes {
		shouldRun := s.fits[i].shouldRun
		pods := s.byNode[node.Name]
		switch {
		case !shouldRun:
			if len(pods) > 0 {
				n.misscheduled++
			}
			continue
		case len(pods) == 0:
			n.desired++
			continue
		}
		n.desired++
		n.current++
		pod := slices.MinFunc(pods, byAge)
		if podranking.IsReady(pod) {
			n.ready++
			if podranking.IsAvailable(pod, s.ds.Spec.MinReadySeconds, s.now) {
				n.available++
			}
		}
		if s.rev.updated(pod) {
			n.updated++
		}
	}
	return n
}

// updateStatus writes the DaemonSet's status if it changed, with
// observedGeneration raised to the generation when observe (a sync that
// waited for expectations did not act on it). Like upstream, it requeues
// the DaemonSet after minReadySeconds while ready pods are not all
// available yet.
func (c *Controller) updateStatus(ctx context.Context, s *syncState, observe bool) error {
	ds := s.ds
	n := c.calculateCounts(s)
	want := ds.Status
	want.DesiredNumberScheduled = n.desired
	want.CurrentNumberScheduled = n.current
	want.NumberMisscheduled = n.misscheduled
	want.NumberReady = n.ready
	want.UpdatedNumberScheduled = n.updated
	want.NumberAvailable = n.available
	want.NumberUnavailable = n.desired - n.available
	if observe {
		want.ObservedGeneration = ds.Generation
	}
	// Upstream writes whenever observedGeneration lags, even when the
	// write cannot raise it: such a write changes nothing.
	if sameCounters(ds.Status, want) && (ds.Status.ObservedGeneration >= ds.Generation || !observe) {
		return c.requeueForAvailability(ds, n)
	}
	key := objectKey(ds)
	if d := c.statusSpacer.Delay(key); d > 0 && progressOnly(ds.Status, want) && !settled(want) {
		// Progress only, and written less than a period ago: write it
		// when the period ends, with whatever else changed by then. The
		// goal is written at once: nothing follows it to gather.
		klog.FromContext(ctx).V(4).Info("Delaying status update", "daemonset", klog.KObj(ds), "delay", d)
		c.queue.AddAfter(key, d)
		return c.requeueForAvailability(ds, n)
	}
	updated, err := c.writeStatus(ctx, ds, want, observe)
	if err != nil {
		return fmt.Errorf("error storing status for daemon set %s: %w", klog.KObj(ds), err)
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}, updated.UID, daemonSetResource, updated.ResourceVersion)
	c.written.wrote(key, updated.ResourceVersion)
	c.statusSpacer.Wrote(key)
	return c.requeueForAvailability(ds, n)
}

func (c *Controller) requeueForAvailability(ds *apps.DaemonSet, n counts) error {
	if ds.Spec.MinReadySeconds > 0 && n.ready != n.available {
		c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

// settled reports whether a status shows its DaemonSet at its goal: an
// updated, available pod on every node that should run one, and on no
// other.
func settled(st apps.DaemonSetStatus) bool {
	d := st.DesiredNumberScheduled
	return st.CurrentNumberScheduled == d && st.UpdatedNumberScheduled == d && st.NumberReady == d &&
		st.NumberAvailable == d && st.NumberMisscheduled == 0
}

// progressOnly reports whether want differs from the written status cur
// only in its counters: a write a Spacer may hold back.
func progressOnly(cur, want apps.DaemonSetStatus) bool {
	return want.ObservedGeneration == cur.ObservedGeneration
}

func sameCounters(a, b apps.DaemonSetStatus) bool {
	return a.DesiredNumberScheduled == b.DesiredNumberScheduled &&
		a.CurrentNumberScheduled == b.CurrentNumberScheduled &&
		a.NumberMisscheduled == b.NumberMisscheduled &&
		a.NumberReady == b.NumberReady &&
		a.UpdatedNumberScheduled == b.UpdatedNumberScheduled &&
		a.NumberAvailable == b.NumberAvailable &&
		a.NumberUnavailable == b.NumberUnavailable
}

// writeStatus puts want's counters (and observedGeneration when observe)
// on a copy of ds and writes it; on failure it retries once on a fresh
// read.
func (c *Controller) writeStatus(ctx context.Context, ds *apps.DaemonSet, want apps.DaemonSetStatus, observe bool) (*apps.DaemonSet, error) {
	client := c.client.AppsV1().DaemonSets(ds.Namespace)
	toUpdate := ds.DeepCopy()
	for attempt := 0; ; attempt++ {
		if observe {
			toUpdate.Status.ObservedGeneration = ds.Generation
		}
		setCounters(&toUpdate.Status, want)
		updated, err := client.UpdateStatus(ctx, toUpdate, metav1.UpdateOptions{})
		if err == nil {
			return updated, nil
		}
		if attempt >= statusUpdateRetries {
			return nil, err
		}
		var getErr error
		if toUpdate, getErr = client.Get(ctx, ds.Name, metav1.GetOptions{}); getErr != nil {
			// The status cannot be trusted any more; this error is the
			// more interesting one.
			return nil, getErr
		}
	}
}

func setCounters(st *apps.DaemonSetStatus, want apps.DaemonSetStatus) {
	st.DesiredNumberScheduled = want.DesiredNumberScheduled
	st.CurrentNumberScheduled = want.CurrentNumberScheduled
	st.NumberMisscheduled = want.NumberMisscheduled
	st.NumberReady = want.NumberReady
	st.UpdatedNumberScheduled = want.UpdatedNumberScheduled
	st.NumberAvailable = want.NumberAvailable
	st.NumberUnavailable = want.NumberUnavailable
}
