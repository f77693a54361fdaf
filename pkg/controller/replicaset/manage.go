package replicaset

import (
	"context"
	"sort"
	"sync"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/labelindex"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// manageReplicas creates or deletes pods, at most burstReplicas, to bring
// activePods to spec.replicas, and returns the pods it deleted or found
// gone and how many it created. It does not modify the pods, but may
// reorder activePods.
func (c *Controller) manageReplicas(ctx context.Context, key string, rs *apps.ReplicaSet, activePods []*v1.Pod) (deleted []*v1.Pod, created int, err error) {
	diff := len(activePods) - int(desiredReplicas(rs))
	logger := klog.FromContext(ctx)
	switch {
	case diff < 0:
		n := min(-diff, c.burstReplicas)
		logger.V(2).Info("Too few replicas", "kind", c.kind.Kind, "object", klog.KObj(rs), "need", desiredReplicas(rs), "creating", n)
		created, err := c.createPods(ctx, key, rs, n)
		return nil, created, err
	case diff > 0:
		n := min(diff, c.burstReplicas)
		logger.V(2).Info("Too many replicas", "kind", c.kind.Kind, "object", klog.KObj(rs), "need", desiredReplicas(rs), "deleting", n)
		deleted, err := c.deletePods(ctx, key, rs, activePods, n)
		return deleted, 0, err
	}
	return nil, 0, nil
}

// desiredReplicas is spec.replicas, defaulted as the API server does.
func desiredReplicas(rs *apps.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// createPods creates n pods in slow-start batches and returns how many
// creations succeeded. Creations that were skipped or failed are not
// expected: the informer will never see them.
func (c *Controller) createPods(ctx context.Context, key string, rs *apps.ReplicaSet, n int) (int, error) {
	logger := klog.FromContext(ctx)
	// Expect before creating: the informer may see a pod before Create
	// returns.
	c.expectations.ExpectCreations(logger, key, n)
	ref := metav1.NewControllerRef(rs, c.kind)
	target := c.eventTarget(rs)
	created, err := podcontrol.SlowStartBatch(n, podcontrol.SlowStartInitialBatchSize, func() error {
		err := c.podControl.CreatePods(ctx, rs.Namespace, &rs.Spec.Template, target, ref)
		if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			// Every create will fail until the namespace is gone; not an error.
			return nil
		}
		return err
	})
	if skipped := n - created; skipped > 0 {
		logger.V(2).Info("Slow-start failure. Skipping creation of pods, decrementing expectations",
			"podsSkipped", skipped, "kind", c.kind.Kind, "object", klog.KObj(rs))
		c.expectations.LowerExpectations(logger, key, skipped, 0)
	}
	return created, err
}

// deletePods deletes the n pods of activePods ranked first for deletion,
// concurrently, and returns those deleted or found gone, and the first
// error.
func (c *Controller) deletePods(ctx context.Context, key string, rs *apps.ReplicaSet, activePods []*v1.Pod, n int) ([]*v1.Pod, error) {
	logger := klog.FromContext(ctx)
	victims := podsToDelete(activePods, c.relatedPods(logger, rs), n, c.clock.Now(), c.deletionCost)

	// Expect exactly these pods, so that each is counted once whether it
	// is seen terminating or gone.
	keys := make([]string, len(victims))
	for i, p := range victims {
		keys[i] = podKey(p)
	}
	c.expectations.ExpectDeletions(logger, key, keys)

	target := c.eventTarget(rs)
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, pod := range victims {
		wg.Go(func() {
			err := c.podControl.DeletePod(ctx, rs.Namespace, pod.Name, target)
			if err == nil {
				return
			}
			// The informer will not see this deletion.
			c.expectations.DeletionObserved(logger, key, podKey(pod))
			if !apierrors.IsNotFound(err) {
				logger.V(2).Info("Failed to delete pod, decremented expectations", "pod", klog.KObj(pod), "kind", c.kind.Kind, "object", klog.KObj(rs))
				errs[i] = err
			}
		})
	}
	wg.Wait()
	var deleted []*v1.Pod
	var first error
	for i, pod := range victims {
		switch {
		case errs[i] == nil:
			deleted = append(deleted, pod)
		case first == nil:
			// Likely all the same error: report one.
			first = errs[i]
		}
	}
	return deleted, first
}

// relatedPods returns the pods of all owners that share rs's controller
// (the ReplicaSets of one Deployment), rs's own included; none if rs has
// no controller.
func (c *Controller) relatedPods(logger klog.Logger, rs *apps.ReplicaSet) []*v1.Pod {
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return nil
	}
	var related []*v1.Pod
	seen := map[types.UID]bool{}
	for _, other := range c.owners.ControlledBy(ref.UID) {
		selector, err := metav1.LabelSelectorAsSelector(other.Spec.Selector)
		if err != nil {
			continue // an invalid selector matches nothing
		}
		pods, err := labelindex.Select[*v1.Pod](c.podIndexer, other.Namespace, selector)
		if err != nil {
			continue
		}
		for _, p := range pods {
			if !seen[p.UID] {
				seen[p.UID] = true
				related = append(related, p)
			}
		}
	}
	logger.V(4).Info("Found related pods", "kind", c.kind.Kind, "object", klog.KObj(rs), "pods", klog.KObjSlice(related))
	return related
}

// podsToDelete returns the n pods of pods ranked first for deletion (see
// podranking), ranking each by how many active related pods share its
// node. It sorts pods in place, unless all are deleted anyway.
func podsToDelete(pods, related []*v1.Pod, n int, now time.Time, useDeletionCost bool) []*v1.Pod {
	if n < len(pods) {
		perNode := map[string]int{}
		for _, p := range related {
			if podranking.IsActive(p) {
				perNode[p.Spec.NodeName]++
			}
		}
		ranks := make([]int, len(pods))
		for i, p := range pods {
			ranks[i] = perNode[p.Spec.NodeName]
		}
		sort.Sort(podranking.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: now, UseDeletionCost: useDeletionCost})
		observeDeletionAgeRatios(pods, pods[:n], now)
	}
	return pods[:n]
}
