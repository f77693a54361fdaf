package validatingadmissionpolicystatus

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1apply "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/klog/v2"
)

// sync type-checks the named policy if its spec changed since the last
// check (generation ahead of status.observedGeneration) and applies the
// result to its status. A policy that is gone or already checked at its
// generation needs nothing.
func (c *Controller) sync(ctx context.Context, name string) error {
	policy, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if policy.Generation <= policy.Status.ObservedGeneration {
		return nil
	}
	warnings := c.checker.Check(policy)
	klog.FromContext(ctx).V(2).Info("Type-checked ValidatingAdmissionPolicy", "policy", klog.KObj(policy),
		"generation", policy.Generation, "warnings", len(warnings))

	typeChecking := admissionregistrationv1apply.TypeChecking()
	for _, w := range warnings {
		typeChecking.WithExpressionWarnings(admissionregistrationv1apply.ExpressionWarning().
			WithFieldRef(w.FieldRef).
			WithWarning(w.Warning))
	}
	apply := admissionregistrationv1apply.ValidatingAdmissionPolicy(policy.Name).
		WithStatus(admissionregistrationv1apply.ValidatingAdmissionPolicyStatus().
			WithObservedGeneration(policy.Generation).
			WithTypeChecking(typeChecking))
	if _, err := c.client.ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("applying the status of ValidatingAdmissionPolicy %s: %w", policy.Name, err)
	}
	return nil
}
