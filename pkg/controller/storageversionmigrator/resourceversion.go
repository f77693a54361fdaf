package storageversionmigrator

import (
	"context"
	"fmt"
	"slices"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/klog/v2"
)

// invalidNamespace is listed for a namespaced resource's current
// resourceVersion: the list is empty and cheap, its resourceVersion is the
// resource's latest (upstream's trick and name).
const invalidNamespace = "@fake:svm_ns!"

// discoveryGrace is how long a migration waits for its resource to appear
// in discovery before it fails.
const discoveryGrace = time.Minute

// verbsRequired are the verbs a resource needs to be migrated.
var verbsRequired = []string{"update", "patch", "list"}

// syncResourceVersion records in a running migration's
// status.resourceVersion the resource's current resourceVersion: objects
// not newer than it are the ones to rewrite.
func (c *Controller) syncResourceVersion(ctx context.Context, name string) error {
	cached, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !isRunning(cached) || isTerminal(cached) || cached.Status.ResourceVersion != "" {
		return nil
	}
	svm := cached.DeepCopy()
	gr := schema.GroupResource{Group: svm.Spec.Resource.Group, Resource: svm.Spec.Resource.Resource}
	gvr, ok, err := resourceFor(c.mapper, gr)
	if err != nil {
		return err
	}
	if !ok {
		if c.clock.Since(svm.CreationTimestamp.Time) < discoveryGrace {
			c.resetMapperIfStale()
			return fmt.Errorf("resource %s does not exist in discovery yet, retrying", gr)
		}
		return c.failFromResourceVersion(ctx, svm, "resource does not exist in discovery")
	}
	res, err := c.apiResource(gvr)
	if err != nil {
		return err
	}
	if res == nil || !hasVerbs(res, verbsRequired...) {
		err := fmt.Errorf("resource %q does not support discovery operations: %v", gvr.String(), verbsRequired)
		klog.FromContext(ctx).Error(err, "Resource cannot be migrated, not retrying", "svm", klog.KObj(svm))
		return c.failFromResourceVersion(ctx, svm, err.Error())
	}
	latest, err := c.latestResourceVersion(ctx, gvr, res.Namespaced)
	if err != nil {
		return err
	}
	if _, err := resourceversion.CompareResourceVersion(latest, latest); err != nil {
		return c.failFromResourceVersion(ctx, svm, fmt.Sprintf("latest resourceVersion for %s is not valid: %v", gvr.String(), err))
	}
	svm.Status.ResourceVersion = latest
	if _, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating status for %s: %w", svm.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Storage version migration resourceVersion set", "svm", klog.KObj(svm), "resourceVersion", latest)
	return nil
}

// apiResource returns the discovery entry of gvr, nil when its group
// version is not served or does not list it.
func (c *Controller) apiResource(gvr schema.GroupVersionResource) (*metav1.APIResource, error) {
	list, err := c.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if list != nil {
		for i := range list.APIResources {
			if list.APIResources[i].Name == gvr.Resource {
				return &list.APIResources[i], nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("resource %q not found in discovery", gvr.String())
}

func hasVerbs(r *metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.Verbs, v) {
			return false
		}
	}
	return true
}

// latestResourceVersion returns the resource's current resourceVersion from
// a list of at most one object (of no object, for a namespaced resource).
func (c *Controller) latestResourceVersion(ctx context.Context, gvr schema.GroupVersionResource, namespaced bool) (string, error) {
	opts := metav1.ListOptions{Limit: 1}
	var err error
	var list *metav1.PartialObjectMetadataList
	if namespaced {
		list, err = c.metadata.Resource(gvr).Namespace(invalidNamespace).List(ctx, opts)
	} else {
		list, err = c.metadata.Resource(gvr).List(ctx, opts)
	}
	if err != nil {
		return "", fmt.Errorf("error getting latest resourceVersion for %s: %w", gvr.String(), err)
	}
	return list.ResourceVersion, nil
}

// failFromResourceVersion adds Failed=True, as upstream's resourceVersion
// loop does (without the "unhandled error" prefix of the migration loop).
func (c *Controller) failFromResourceVersion(ctx context.Context, svm *svmv1.StorageVersionMigration, message string) error {
	if !addCondition(svm, svmv1.MigrationFailed, reasonFailed, message, metav1.NewTime(c.clock.Now())) {
		return nil
	}
	_, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	return err
}
