package daemonset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
)

// syncState is what one sync of a DaemonSet works from: the cached
// DaemonSet and nodes, and the pods it claimed, read once.
type syncState struct {
	ds       *apps.DaemonSet
	key      string
	selector labels.Selector
	nodes    []*v1.Node
	place    *placement
	// fits[i] is place's verdict for nodes[i].
	fits []fit
	// revisionData is the DaemonSet's current revision data; rev tells
	// its pods of the current template from old ones (known once the
	// history is constructed).
	revisionData []byte
	rev          revisionState
	// pods are the claimed pods; byNode those for each node, without the
	// terminal ones being deleted.
	pods   []*v1.Pod
	byNode nodePods
	// now is the instant availability is judged at.
	now time.Time
	// yielded is set when manage covered only some of the new nodes
	// needing a pod and left the rest to the DaemonSet's next turn
	// (newNodesFirst).
	yielded bool
}

// sync reconciles the DaemonSet named by key; see the package
// documentation. It is never called concurrently for one key.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	defer func() {
		logger.V(4).Info("Finished syncing daemon set", "daemonset", key, "time", c.clock.Since(start))
	}()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	// Until the informers have seen this controller's last writes, what
	// they hold would undo them.
	if err := c.consistency.EnsureReady(nn); err != nil {
		var stale *expectations.StaleCacheError
		if errors.As(err, &stale) {
			staleSyncSkips.WithLabelValues(stale.Resource.Group, stale.Resource.Resource).Inc()
		}
		return err
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(3).Info("Daemon set has been deleted", "daemonset", key)
		c.expectations.DeleteExpectations(logger, key)
		c.consistency.Clear(nn, "")
		return nil
	}
	if err != nil {
		return fmt.Errorf("unable to retrieve ds %v from store: %v", key, err)
	}
	if reflect.DeepEqual(ds.Spec.Selector, &metav1.LabelSelector{}) {
		c.recorder.Eventf(ds, v1.EventTypeWarning, SelectingAllReason, "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	// The revisions of a DaemonSet being deleted may be gone or orphaned
	// already, and its pods not yet: its status cannot be told.
	if ds.DeletionTimestamp != nil {
		return nil
	}
	// Expectations are read before the pods: once they are satisfied, the
	// cache holds every pod change they waited for. Read after, they may
	// have become satisfied by changes the pods read before do not show,
	// and the sync would delete again the pods the last one deleted.
	satisfied := c.expectations.SatisfiedExpectations(logger, key)
	s, err := c.newSyncState(ctx, ds, key)
	if err != nil {
		return err
	}
	cur, old, err := c.constructHistory(ctx, s)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %w", err)
	}
	s.rev = newRevisionState(ds, cur.Labels[hashLabel])

	if !satisfied {
		// Status only; observedGeneration stays: this generation was not
		// acted on.
		return c.updateStatus(ctx, s, false)
	}
	err = c.update(ctx, s, old)
	if err == nil && s.yielded {
		// Its pod events bring the DaemonSet back within seconds, and
		// the sync that covers the last node writes the status: one
		// write per turn would cost each turn a request.
		return nil
	}
	statusErr := c.updateStatus(ctx, s, true)
	switch {
	case err != nil && statusErr != nil:
		logger.Error(statusErr, "Failed to update status", "daemonSet", klog.KObj(ds))
		return err
	case err != nil:
		return err
	}
	return statusErr
}

// newSyncState reads what a sync works from, claiming ds's pods.
func (c *Controller) newSyncState(ctx context.Context, ds *apps.DaemonSet, key string) (*syncState, error) {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("couldn't get list of nodes when syncing daemon set %s: %v", klog.KObj(ds), err)
	}
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		// Validation prevents this; retrying cannot fix it.
		return nil, controller.Permanent(fmt.Errorf("daemon set %s: invalid selector: %w", klog.KObj(ds), err))
	}
	data, err := revisionData(ds)
	if err != nil {
		return nil, controller.Permanent(fmt.Errorf("daemon set %s: encoding its template: %w", klog.KObj(ds), err))
	}
	s := &syncState{
		ds:           ds,
		key:          key,
		selector:     selector,
		nodes:        nodes,
		place:        c.placements.of(ds),
		revisionData: data,
		now:          c.failedPods.Clock.Now(),
	}
	s.fits = make([]fit, len(nodes))
	for i, node := range nodes {
		s.fits[i] = s.place.on(klog.FromContext(ctx), node)
	}
	if err := c.readPods(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// readPods claims the DaemonSet's pods from the cache.
func (c *Controller) readPods(ctx context.Context, s *syncState) error {
	pods, err := c.claimPods(ctx, s.ds, s.selector)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %v", s.ds.Name, err)
	}
	s.pods = pods
	s.byNode = groupByNode(klog.FromContext(ctx), s.ds, pods, false)
	return nil
}

// update makes the pods what the DaemonSet wants (manage), then, if that
// needed no change, takes the rolling update's next step, and cleans up
// history.
func (c *Controller) update(ctx context.Context, s *syncState, old []*apps.ControllerRevision) error {
	acted, err := c.manage(ctx, s)
	if err != nil {
		return err
	}
	if c.expectations.SatisfiedExpectations(klog.FromContext(ctx), s.key) &&
		s.ds.Spec.UpdateStrategy.Type == apps.RollingUpdateDaemonSetStrategyType {
		// The informer already saw all manage did: the rolling update
		// must see it too, or it deletes a pod manage just deleted.
		if acted {
			if err := c.readPods(ctx, s); err != nil {
				return err
			}
		}
		if err := c.rollingUpdate(ctx, s); err != nil {
			return err
		}
	}
	if err := c.cleanupHistory(ctx, s, old); err != nil {
		return fmt.Errorf("failed to clean up revisions of DaemonSet: %w", err)
	}
	return nil
}
