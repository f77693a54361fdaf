package namespace

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// deleter empties a terminating namespace and removes its finalizer.
type deleter struct {
	namespaces corev1client.NamespaceInterface
	pods       corev1client.PodsGetter
	metadata   metadata.Interface
	// discover returns the preferred versions of all namespaced resources
	// (the discovery client's ServerPreferredNamespacedResources).
	discover func() ([]*metav1.APIResourceList, error)
	// finalizerToken is the spec finalizer this controller owns
	// ("kubernetes").
	finalizerToken v1.FinalizerName
	clock          clock.PassiveClock
}

// backgroundDeletion is the propagation upstream deletes content with.
func backgroundDeletion() metav1.DeleteOptions {
	p := metav1.DeletePropagationBackground
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

// Delete processes the namespace named name: it does nothing unless the
// namespace is being deleted; otherwise it marks it Terminating, deletes its
// content and, once nothing is left, removes finalizerToken. It returns a
// *ResourcesRemainingError while content is still terminating.
func (d *deleter) Delete(ctx context.Context, name string) error {
	ns, err := d.namespaces.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	klog.FromContext(ctx).V(5).Info("Namespace controller - syncNamespace", "namespace", ns.Name, "finalizerToken", d.finalizerToken)

	ns, err = d.retryOnConflict(ctx, ns, d.markTerminating)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// The namespace may have been recreated while we waited.
	if ns.DeletionTimestamp.IsZero() || len(ns.Spec.Finalizers) == 0 {
		return nil
	}

	estimate, err := d.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &ResourcesRemainingError{Estimate: estimate}
	}

	_, err = d.retryOnConflict(ctx, ns, d.finalize)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

type updateFunc func(ctx context.Context, ns *v1.Namespace) (*v1.Namespace, error)

// retryOnConflict applies fn, reading the namespace again after each
// conflict, and gives up if the namespace was replaced by another one.
func (d *deleter) retryOnConflict(ctx context.Context, ns *v1.Namespace, fn updateFunc) (*v1.Namespace, error) {
	for {
		result, err := fn(ctx, ns)
		if err == nil {
			return result, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		latest, err := d.namespaces.Get(ctx, ns.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if latest.UID != ns.UID {
			return nil, errors.New("namespace uid has changed across retries")
		}
		ns = latest
	}
}

// markTerminating sets the Terminating phase unless it is already set.
func (d *deleter) markTerminating(ctx context.Context, ns *v1.Namespace) (*v1.Namespace, error) {
	if ns.DeletionTimestamp.IsZero() || ns.Status.Phase == v1.NamespaceTerminating {
		return ns, nil
	}
	updated := ns.DeepCopy()
	updated.Status.Phase = v1.NamespaceTerminating
	return d.namespaces.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
}

// finalize removes finalizerToken from spec.finalizers through the
// finalize subresource; the remaining finalizers are kept, sorted.
func (d *deleter) finalize(ctx context.Context, ns *v1.Namespace) (*v1.Namespace, error) {
	keep := map[string]bool{}
	for _, f := range ns.Spec.Finalizers {
		if f != d.finalizerToken {
			keep[string(f)] = true
		}
	}
	names := make([]string, 0, len(keep))
	for f := range keep {
		names = append(names, f)
	}
	sort.Strings(names)
	finalized := v1.Namespace{ObjectMeta: ns.ObjectMeta, Spec: ns.Spec}
	finalized.Spec.Finalizers = make([]v1.FinalizerName, 0, len(names))
	for _, f := range names {
		finalized.Spec.Finalizers = append(finalized.Spec.Finalizers, v1.FinalizerName(f))
	}
	result, err := d.namespaces.Finalize(ctx, &finalized, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return result, nil
	}
	return result, err
}

// deleteAllContent deletes every deletable namespaced resource in ns, pods
// first: while pods remain nothing else is deleted, so that their
// controllers, volumes and service accounts outlive them. It records the
// outcome in ns's conditions and returns the estimated seconds until the
// remaining content is gone. Errors from single resources do not stop the
// others.
func (d *deleter) deleteAllContent(ctx context.Context, ns *v1.Namespace) (int64, error) {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("namespace controller - deleteAllContent", "namespace", ns.Name)
	var (
		errs     []error
		conds    conditions
		estimate int64
		left     = newRemaining()
	)
	resources, discoveryErr, parseErr := discoverResources(d.discover)
	if discoveryErr != nil {
		errs = append(errs, discoveryErr)
		conds.discoveryFailed(discoveryErr)
	}
	if parseErr != nil {
		errs = append(errs, parseErr)
		conds.groupVersionParsingFailed(parseErr)
	}

	deleteOne := func(gvr schema.GroupVersionResource) {
		res, err := d.deleteResource(ctx, resources, gvr, ns.Name, *ns.DeletionTimestamp)
		if err != nil {
			if gvr == podsGVR {
				err = fmt.Errorf("failed to delete pods for namespace: %s, err: %w", ns.Name, err)
			}
			errs = append(errs, err)
			conds.contentDeletionFailed(err)
		}
		estimate = max(estimate, res.estimate)
		left.add(gvr, res)
	}

	if _, ok := resources.deletable[podsGVR]; ok {
		deleteOne(podsGVR)
		if left.byResource[podsGVR] > 0 {
			// As upstream: the remaining-content conditions are not
			// computed while pods are waited for, so they read False.
			logger.V(5).Info("Namespace controller - pods still remain, delaying deletion of other resources", "namespace", ns.Name)
			d.updateConditions(ctx, ns, &conds)
			return estimate, utilerrors.NewAggregate(errs)
		}
	}
	for gvr := range resources.deletable {
		if gvr != podsGVR {
			deleteOne(gvr)
		}
	}
	conds.contentRemaining(left)
	d.updateConditions(ctx, ns, &conds)

	err := utilerrors.NewAggregate(errs)
	logger.V(4).Info("namespace controller - deleteAllContent", "namespace", ns.Name, "estimate", estimate, "err", err)
	return estimate, err
}

// updateConditions writes ns's status if its conditions changed. A failure
// is only logged: the next pass writes them again.
func (d *deleter) updateConditions(ctx context.Context, ns *v1.Namespace, conds *conditions) {
	if !conds.apply(&ns.Status) {
		return
	}
	if _, err := d.namespaces.UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Couldn't update status condition for namespace", "namespace", ns.Name)
	}
}

// gvrResult is what is left of one resource after its deletion.
type gvrResult struct {
	estimate     int64
	numRemaining int
	finalizers   map[string]int
}

// deleteResource deletes all instances of gvr in ns, with one
// deletecollection call where supported and otherwise one delete per
// listed item, then lists again to see what is left. Items left with
// finalizers are expected and yield an estimate; items left without any
// estimate or finalizer are an error.
func (d *deleter) deleteResource(ctx context.Context, res discovered, gvr schema.GroupVersionResource, ns string, deletedAt metav1.Time) (gvrResult, error) {
	logger := klog.FromContext(ctx)
	logger.V(5).Info("Namespace controller - deleteAllContentForGroupVersionResource", "namespace", ns, "resource", gvr)
	estimate, err := d.estimateGracefulTermination(ctx, gvr, ns, deletedAt)
	if err != nil {
		return gvrResult{}, err
	}
	deleted, err := d.deleteCollection(ctx, res, gvr, ns)
	if err != nil {
		return gvrResult{estimate: estimate}, err
	}
	if !deleted {
		if err := d.deleteEachItem(ctx, res, gvr, ns); err != nil {
			return gvrResult{estimate: estimate}, err
		}
	}

	items, listed, err := d.list(ctx, res, gvr, ns)
	if err != nil || !listed {
		return gvrResult{estimate: estimate}, err
	}
	if len(items.Items) == 0 {
		return gvrResult{}, nil
	}
	finalizers := map[string]int{}
	for _, item := range items.Items {
		for _, f := range item.GetFinalizers() {
			finalizers[f]++
		}
	}
	switch {
	case estimate != 0:
		return gvrResult{estimate: estimate, numRemaining: len(items.Items), finalizers: finalizers}, nil
	case len(finalizers) > 0:
		return gvrResult{estimate: finalizerEstimateSeconds, numRemaining: len(items.Items), finalizers: finalizers}, nil
	}
	return gvrResult{numRemaining: len(items.Items)},
		fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns, gvr)
}

// deleteCollection reports whether gvr could be deleted with one
// deletecollection call; false means "list and delete each".
func (d *deleter) deleteCollection(ctx context.Context, res discovered, gvr schema.GroupVersionResource, ns string) (bool, error) {
	if res.noDeleteCollection[gvr] {
		return false, nil
	}
	err := d.metadata.Resource(gvr).Namespace(ns).DeleteCollection(ctx, backgroundDeletion(), metav1.ListOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
		return false, nil
	}
	return true, err
}

// list returns the instances of gvr in ns; false means gvr cannot be
// listed.
func (d *deleter) list(ctx context.Context, res discovered, gvr schema.GroupVersionResource, ns string) (*metav1.PartialObjectMetadataList, bool, error) {
	if res.noList[gvr] {
		return nil, false, nil
	}
	items, err := d.metadata.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	switch {
	case err == nil:
		return items, true, nil
	case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
		return nil, false, nil
	}
	return nil, true, err
}

func (d *deleter) deleteEachItem(ctx context.Context, res discovered, gvr schema.GroupVersionResource, ns string) error {
	items, listed, err := d.list(ctx, res, gvr, ns)
	if err != nil || !listed {
		return err
	}
	for _, item := range items.Items {
		err := d.metadata.Resource(gvr).Namespace(ns).Delete(ctx, item.GetName(), backgroundDeletion())
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return err
		}
	}
	return nil
}
