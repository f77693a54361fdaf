package disruption

import (
	"context"

	policy "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// budgetStatus is the status a sync computed: the counts, disruptedPods,
// observedGeneration, and the DisruptionAllowed condition (other
// conditions kept). disruptionsAllowed is 0 while no pods are expected, so
// that a budget whose first pods just appeared allows nothing until it is
// synced with them.
func budgetStatus(pdb *policy.PodDisruptionBudget, e expectation, healthy int32, disrupted map[string]metav1.Time) policy.PodDisruptionBudgetStatus {
	allowed := healthy - e.desiredHealthy
	if e.expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	return policy.PodDisruptionBudgetStatus{
		CurrentHealthy:     healthy,
		DesiredHealthy:     e.desiredHealthy,
		ExpectedPods:       e.expected,
		DisruptionsAllowed: allowed,
		DisruptedPods:      disrupted,
		ObservedGeneration: pdb.Generation,
		Conditions:         pdb.Status.Conditions,
	}
}

// writeStatus writes status, with the DisruptionAllowed condition that
// follows from its counts, unless the budget already has it (upstream's
// comparison: counts, disruptedPods, observedGeneration and the
// condition's status and reason).
func (c *Controller) writeStatus(ctx context.Context, pdb *policy.PodDisruptionBudget, status policy.PodDisruptionBudgetStatus) error {
	old := &pdb.Status
	if old.CurrentHealthy == status.CurrentHealthy &&
		old.DesiredHealthy == status.DesiredHealthy &&
		old.ExpectedPods == status.ExpectedPods &&
		old.DisruptionsAllowed == status.DisruptionsAllowed &&
		apiequality.Semantic.DeepEqual(old.DisruptedPods, status.DisruptedPods) &&
		old.ObservedGeneration == pdb.Generation &&
		pdbhelper.ConditionsAreUpToDate(pdb) {
		return nil
	}
	newPdb := pdb.DeepCopy()
	newPdb.Status = status
	newPdb.Status.Conditions = append([]metav1.Condition{}, pdb.Status.Conditions...)
	if status.DisruptionsAllowed > 0 {
		c.setCondition(newPdb, metav1.ConditionTrue, policy.SufficientPodsReason, "")
	} else {
		c.setCondition(newPdb, metav1.ConditionFalse, policy.InsufficientPodsReason, "")
	}
	return c.update(ctx, newPdb)
}

// failSafe sets disruptionsAllowed to 0 and DisruptionAllowed=False with
// reason SyncFailed and the error as message, so that the eviction API
// admits nothing while the budget cannot be computed. A status that
// already says so is not written again.
func (c *Controller) failSafe(ctx context.Context, pdb *policy.PodDisruptionBudget, syncErr error) error {
	newPdb := pdb.DeepCopy()
	newPdb.Status.DisruptionsAllowed = 0
	c.setCondition(newPdb, metav1.ConditionFalse, policy.SyncFailedReason, syncErr.Error())
	if apiequality.Semantic.DeepEqual(newPdb.Status, pdb.Status) {
		return nil
	}
	return c.update(ctx, newPdb)
}

// setCondition sets the DisruptionAllowed condition, observing the
// status's observedGeneration; its lastTransitionTime changes only with
// its status, to the controller's clock.
func (c *Controller) setCondition(pdb *policy.PodDisruptionBudget, status metav1.ConditionStatus, reason, message string) {
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
		Type:               policy.DisruptionAllowedCondition,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: pdb.Status.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
}

// update writes the budget's status once; a failure is retried by the
// queue, after a fresh read from the cache.
func (c *Controller) update(ctx context.Context, pdb *policy.PodDisruptionBudget) error {
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	return err
}
