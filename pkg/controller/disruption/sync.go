package disruption

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
)

// sync brings one budget's status up to date. A failure other than a
// write conflict is reported in the status (failSafe) and not retried
// unless that write fails too.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	defer func() {
		logger.V(4).Info("Finished syncing PodDisruptionBudget", "key", key, "duration", c.clock.Since(start))
	}()
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pdb, err := c.pdbs.PodDisruptionBudgets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("podDisruptionBudget has been deleted", "key", key)
		return nil
	}
	if err != nil {
		return err
	}
	err = c.syncBudget(ctx, key, pdb)
	if err == nil || apierrors.IsConflict(err) {
		return err
	}
	logger.Error(err, "Failed to sync PDB", "podDisruptionBudget", klog.KRef(ns, name))
	return c.failSafe(ctx, pdb, err)
}

// syncBudget computes and writes the budget's status, recording upstream's
// Events, and requeues the budget for the expiry of its next disrupted pod.
func (c *Controller) syncBudget(ctx context.Context, key string, pdb *policy.PodDisruptionBudget) error {
	logger := klog.FromContext(ctx)
	pods, err := c.selectedPods(pdb)
	if err != nil {
		c.recorder.Eventf(pdb, v1.EventTypeWarning, reasonNoPods, "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		c.recorder.Eventf(pdb, v1.EventTypeNormal, reasonNoPods, "No matching pods found")
	}
	e, err := c.expect(ctx, pdb, pods)
	if err != nil {
		c.recorder.Eventf(pdb, v1.EventTypeWarning, reasonCalculateFailed, "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(e.unmanaged) > 0 {
		logger.V(4).Info("Found unmanaged pods associated with this PDB", "pods", e.unmanaged)
		c.recorder.Eventf(pdb, v1.EventTypeWarning, reasonUnmanagedPods, "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}

	now := c.clock.Now()
	d := checkDisrupted(pdb.Status.DisruptedPods, pods, now)
	for _, pod := range d.expired {
		logger.V(1).Info("pod was expected to be deleted but it wasn't, updating PDB",
			"pod", klog.KObj(pod), "deletionTime", pdb.Status.DisruptedPods[pod.Name], "podDisruptionBudget", klog.KObj(pdb))
		// Upstream's message names the namespace twice.
		c.recorder.Eventf(pod, v1.EventTypeWarning, reasonNotDeleted, "Pod was expected by PDB %s/%s to be deleted but it wasn't",
			pdb.Namespace, pdb.Namespace)
	}
	status := budgetStatus(pdb, e, countHealthy(pods, d.pods, now), d.pods)
	if err := c.writeStatus(ctx, pdb, status); err != nil {
		return err
	}
	if d.recheck != nil {
		c.queue.AddAfter(key, d.recheck.Sub(now))
	}
	return nil
}

// selectedPods returns the pods the budget's selector matches, sorted by
// name (which pod an error names does not depend on the cache's order).
// They are the cache's: do not modify them.
func (c *Controller) selectedPods(pdb *policy.PodDisruptionBudget) ([]*v1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods, err := labelindex.Select[*v1.Pod](c.podIndexer, pdb.Namespace, sel)
	if err != nil {
		return nil, err
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}
