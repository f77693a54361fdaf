package storageversionmigrator

import (
	"context"
	"encoding/json"
	"fmt"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/klog/v2"
)

// listPageSize bounds each page of the objects' list.
const listPageSize = 500

// gcVerbs are the verbs the garbage collector needs to monitor a resource;
// upstream migrates only what it monitors.
var gcVerbs = []string{"delete", "list", "watch"}

// syncMigration rewrites the objects of a migration whose
// status.resourceVersion is set, then marks it succeeded or failed.
func (c *Controller) syncMigration(ctx context.Context, name string) error {
	cached, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if isTerminal(cached) || cached.Status.ResourceVersion == "" {
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
			return fmt.Errorf("resource %s does not exist in discovery yet, retrying", gr)
		}
		return c.fail(ctx, svm, fmt.Errorf("unable to obtain GVR from discovery"))
	}
	if err := c.monitored(gvr); err != nil {
		return err
	}
	return c.migrate(ctx, svm, gvr)
}

// monitored returns an error (retried, never failing the migration) for a
// resource the garbage collector does not watch: upstream reads the objects
// from its cache and waits for a monitor that never comes.
func (c *Controller) monitored(gvr schema.GroupVersionResource) error {
	if c.gcIgnored[gvr.GroupResource()] {
		return fmt.Errorf("no monitor found for resource %s", gvr.String())
	}
	res, err := c.apiResource(gvr)
	if err != nil {
		return err
	}
	if res == nil || !hasVerbs(res, gcVerbs...) {
		return fmt.Errorf("no monitor found for resource %s", gvr.String())
	}
	return nil
}

// migrationPatch is the no-op merge patch that rewrites an object: its
// apiVersion and kind, and its resourceVersion as a precondition.
type migrationPatch struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
}

func (c *Controller) migrate(ctx context.Context, svm *svmv1.StorageVersionMigration, gvr schema.GroupVersionResource) error {
	logger := klog.FromContext(ctx)
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return c.fail(ctx, svm, err)
	}
	objects, err := c.listObjects(ctx, gvr)
	if err != nil {
		return err
	}
	total := len(objects)
	listRV := svm.Status.ResourceVersion
	var candidates []metav1.PartialObjectMetadata
	for _, o := range objects {
		cmp, err := resourceversion.CompareResourceVersion(o.ResourceVersion, listRV)
		if err != nil {
			logger.Error(err, "Unable to compare the resource version of an object", "object", klog.KObj(&o), "gvr", gvr.String(), "listResourceVersion", listRV)
			return c.fail(ctx, svm, err)
		}
		if cmp > 0 {
			// Written after the migration's start: stored at the current version already.
			continue
		}
		candidates = append(candidates, o)
	}

	remaining := len(candidates)
	for _, o := range candidates {
		var p migrationPatch
		p.APIVersion, p.Kind = gvk.ToAPIVersionAndKind()
		p.Metadata.ResourceVersion = o.ResourceVersion
		data, err := json.Marshal(p)
		if err != nil {
			return c.failWithProgress(ctx, svm, err, remaining, total)
		}
		_, err = c.dynamic.Resource(gvr).Namespace(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, data,
			metav1.PatchOptions{FieldManager: c.name})
		switch {
		case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// A conflict or a deletion means the object was written
			// after the start, which migrated it too.
			remaining--
		case retriable(err):
			logger.V(4).Info("Patch failed with a retriable error", "object", klog.KObj(&o), "gvr", gvr.String(), "err", err)
			if setCondition(svm, svmv1.MigrationRunning, reasonRunning, runningMessage(remaining, total, true, err), metav1.NewTime(c.clock.Now())) {
				_, _ = c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
			}
			return err
		default:
			logger.Error(err, "Failed to migrate an object", "object", klog.KObj(&o), "gvr", gvr.String(), "reason", apierrors.ReasonForError(err))
			return c.failWithProgress(ctx, svm, err, remaining, total)
		}
	}

	now := metav1.NewTime(c.clock.Now())
	running := setCondition(svm, svmv1.MigrationRunning, reasonRunning, runningMessage(remaining, total, true, nil), now)
	succeeded := setCondition(svm, svmv1.MigrationSucceeded, reasonSucceeded, "Migration completed", now)
	if !running && !succeeded {
		return nil
	}
	if _, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	logger.V(2).Info("Storage version migration succeeded", "svm", klog.KObj(svm), "gvr", gvr.String(), "objects", total)
	return nil
}

// listObjects lists the resource's objects' metadata, in pages, from the
// API server's current state.
func (c *Controller) listObjects(ctx context.Context, gvr schema.GroupVersionResource) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		page, err := c.metadata.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.String(), err)
		}
		out = append(out, page.Items...)
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// retriable reports errors a later attempt may not meet.
func retriable(err error) bool {
	return utilnet.IsConnectionReset(err) ||
		utilnet.IsHTTP2ConnectionLost(err) ||
		utilnet.IsProbableEOF(err) ||
		apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) ||
		apierrors.IsTimeout(err)
}

// fail sets Failed=True (reason StorageVersionMigrationFailed) for an error
// retrying cannot fix.
func (c *Controller) fail(ctx context.Context, svm *svmv1.StorageVersionMigration, cause error) error {
	msg := fmt.Sprintf("migration encountered unhandled error: %s", cause)
	if !setCondition(svm, svmv1.MigrationFailed, reasonFailed, msg, metav1.NewTime(c.clock.Now())) {
		return nil
	}
	_, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	return err
}

// failWithProgress records the progress on Running and sets Failed=True
// with the number of objects not migrated.
func (c *Controller) failWithProgress(ctx context.Context, svm *svmv1.StorageVersionMigration, cause error, remaining, total int) error {
	now := metav1.NewTime(c.clock.Now())
	msg := fmt.Sprintf("%d/%d not yet migrated. migration encountered unhandled error: %s", remaining, total, cause)
	running := setCondition(svm, svmv1.MigrationRunning, reasonRunning, runningMessage(remaining, total, true, nil), now)
	failed := setCondition(svm, svmv1.MigrationFailed, reasonFailed, msg, now)
	if !running && !failed {
		return nil
	}
	_, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	return err
}
