package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// attemptToOrphan removes the references to the owner uid from all its
// dependents in the graph, then the owner's orphan finalizer.
func (c *Controller) attemptToOrphan(ctx context.Context, uid string) error {
	owner, ok := c.builder.graph.snapshotOf(types.UID(uid))
	if !ok {
		return nil
	}
	if err := c.orphanDependents(ctx, owner.identity, owner.dependents); err != nil {
		return err
	}
	if err := c.removeFinalizer(ctx, owner.identity, metav1.FinalizerOrphanDependents); err != nil {
		return fmt.Errorf("removeOrphanFinalizer for %s failed with %w", owner.identity, err)
	}
	return nil
}

// orphanDependents patches the dependents in parallel, as upstream does.
func (c *Controller) orphanDependents(ctx context.Context, owner objectReference, dependents []objectReference) error {
	errs := make([]error, len(dependents))
	var wg sync.WaitGroup
	for i, dep := range dependents {
		wg.Go(func() {
			err := c.removeOwnerRefs(ctx, dep, []types.UID{owner.UID})
			if err != nil && !apierrors.IsNotFound(err) {
				errs[i] = fmt.Errorf("orphaning %s failed, %w", dep, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("failed to orphan dependents of owner %s, got errors: %w", owner, err)
	}
	klog.FromContext(ctx).V(5).Info("successfully updated all dependents", "owner", owner)
	return nil
}
