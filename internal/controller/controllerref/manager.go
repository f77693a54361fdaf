package controllerref

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// PatchFunc applies a strategic merge patch to the named object of the
// kind a Manager claims.
type PatchFunc func(ctx context.Context, namespace, name string, patch []byte) error

// Manager claims objects of type T for one controller. Use a new Manager
// per sync: the canAdopt check runs at most once per Manager.
type Manager[T metav1.Object] struct {
	controller metav1.Object
	kind       schema.GroupVersionKind
	selector   labels.Selector
	patch      PatchFunc
	// objKind names T in errors and logs ("Pod", "ReplicaSet").
	objKind string
	// finalizers are added on adoption and removed on release.
	finalizers []string

	canAdoptFunc func(ctx context.Context) error
	canAdoptOnce sync.Once
	canAdoptErr  error
}

// New returns a Manager for controller, of kind controllerKind, claiming
// objects of kind objKind that match selector; patch writes them.
// canAdopt, if not nil, must pass before the first adoption (see
// RecheckDeletionTimestamp). finalizers are added to adopted objects and
// removed from released ones.
func New[T metav1.Object](objKind string, patch PatchFunc, controller metav1.Object, controllerKind schema.GroupVersionKind,
	selector labels.Selector, canAdopt func(ctx context.Context) error, finalizers ...string) *Manager[T] {
	return &Manager[T]{
		controller:   controller,
		kind:         controllerKind,
		selector:     selector,
		patch:        patch,
		objKind:      objKind,
		finalizers:   finalizers,
		canAdoptFunc: canAdopt,
	}
}

// NewPodManager returns a Manager claiming pods; patch is typically a
// podcontrol.Interface's PatchPod.
func NewPodManager(patch PatchFunc, controller metav1.Object, controllerKind schema.GroupVersionKind,
	selector labels.Selector, canAdopt func(ctx context.Context) error, finalizers ...string) *Manager[*v1.Pod] {
	return New[*v1.Pod]("Pod", patch, controller, controllerKind, selector, canAdopt, finalizers...)
}

// NewReplicaSetManager returns a Manager claiming ReplicaSets (for the
// Deployment controller); see ReplicaSetPatcher for patch.
func NewReplicaSetManager(patch PatchFunc, controller metav1.Object, controllerKind schema.GroupVersionKind,
	selector labels.Selector, canAdopt func(ctx context.Context) error) *Manager[*appsv1.ReplicaSet] {
	return New[*appsv1.ReplicaSet]("ReplicaSet", patch, controller, controllerKind, selector, canAdopt)
}

// ReplicaSetPatcher returns a PatchFunc writing ReplicaSets through client.
func ReplicaSetPatcher(client kubernetes.Interface) PatchFunc {
	return func(ctx context.Context, namespace, name string, patch []byte) error {
		_, err := client.AppsV1().ReplicaSets(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	}
}

// Claim returns the objects of objs the controller owns after adopting and
// releasing as described in the package documentation. An object must
// match the selector and every filter to be owned. Objects that could not
// be adopted or released are left out, and their errors aggregated; an
// object that disappeared meanwhile is just left out.
func (m *Manager[T]) Claim(ctx context.Context, objs []T, filters ...func(T) bool) ([]T, error) {
	var claimed []T
	var errs []error
	for _, obj := range objs {
		ok, err := m.claim(ctx, obj, filters)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

func (m *Manager[T]) matches(obj T, filters []func(T) bool) bool {
	if !m.selector.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	for _, f := range filters {
		if !f(obj) {
			return false
		}
	}
	return true
}

func (m *Manager[T]) claim(ctx context.Context, obj T, filters []func(T) bool) (bool, error) {
	controllerBeingDeleted := m.controller.GetDeletionTimestamp() != nil
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != m.controller.GetUID() {
			return false, nil // someone else's
		}
		if m.matches(obj, filters) {
			return true, nil
		}
		// Ours but no longer selected. A controller being deleted leaves
		// its objects to the garbage collector.
		if controllerBeingDeleted {
			return false, nil
		}
		if err := m.Release(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	}
	// An orphan.
	if controllerBeingDeleted || !m.matches(obj, filters) || obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if ns := m.controller.GetNamespace(); ns != "" && ns != obj.GetNamespace() {
		return false, nil
	}
	if err := m.Adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// canAdopt runs the canAdopt check once per Manager.
func (m *Manager[T]) canAdopt(ctx context.Context) error {
	m.canAdoptOnce.Do(func() {
		if m.canAdoptFunc != nil {
			m.canAdoptErr = m.canAdoptFunc(ctx)
		}
	})
	return m.canAdoptErr
}

// Adopt sets the controller as obj's controller, unless the canAdopt check
// fails.
func (m *Manager[T]) Adopt(ctx context.Context, obj T) error {
	if err := m.canAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s %v/%v (%v): %v", m.objKind, obj.GetNamespace(), obj.GetName(), obj.GetUID(), err)
	}
	patch, err := adoptPatch(m.controller, m.kind, obj.GetUID(), m.finalizers)
	if err != nil {
		return err
	}
	return m.patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
}

// Release removes the controller's ownerReference from obj. An object
// that is gone, or that the API server refuses to patch as invalid (it is
// being deleted, or its UID changed), counts as released.
func (m *Manager[T]) Release(ctx context.Context, obj T) error {
	klog.FromContext(ctx).V(2).Info("Patching object to remove its controllerRef", "kind", m.objKind, "object", klog.KObj(obj),
		"gvk", m.kind, "controller", m.controller.GetName())
	patch, err := releasePatch(obj.GetUID(), m.controller.GetUID(), m.finalizers)
	if err != nil {
		return err
	}
	err = m.patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

// RecheckDeletionTimestamp turns get, a fresh (uncached) read of the
// controller, into a canAdopt check: adoption is refused if the read fails
// or the controller is being deleted. get should also fail when the UID
// changed (the controller was deleted and recreated).
func RecheckDeletionTimestamp(get func(context.Context) (metav1.Object, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		obj, err := get(ctx)
		if err != nil {
			return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
		}
		if ts := obj.GetDeletionTimestamp(); ts != nil {
			return fmt.Errorf("%v/%v has just been deleted at %v", obj.GetNamespace(), obj.GetName(), ts)
		}
		return nil
	}
}
