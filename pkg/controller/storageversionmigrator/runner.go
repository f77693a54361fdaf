package storageversionmigrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// storageMigrating is the CRD condition type the runner maintains.
const storageMigrating = "StorageMigrating"

// syncRunner keeps one migration at a time running per resource: it marks
// finished running migrations completed and promotes the oldest pending one
// when none runs.
func (c *Controller) syncRunner(ctx context.Context, key string) error {
	gr := schema.ParseGroupResource(key)
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	var finished []*svmv1.StorageVersionMigration
	var next *svmv1.StorageVersionMigration
	inProgress := false
	for _, svm := range all {
		if svm.Spec.Resource.Group != gr.Group || svm.Spec.Resource.Resource != gr.Resource {
			continue
		}
		running, terminal := isRunning(svm), isTerminal(svm)
		switch {
		case running && terminal:
			finished = append(finished, svm)
		case running:
			inProgress = true
		case !terminal && (next == nil || older(svm, next)):
			next = svm
		}
	}
	for _, svm := range finished {
		if err := c.complete(ctx, svm.DeepCopy()); err != nil {
			return err
		}
	}
	if next != nil && !inProgress {
		return c.promote(ctx, next.DeepCopy())
	}
	return nil
}

// older orders migrations by creation time, then name.
func older(a, b *svmv1.StorageVersionMigration) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return strings.Compare(a.Name, b.Name) < 0
}

// complete sets Running=False on a finished migration, after finishing its
// CRD's StorageMigrating condition.
func (c *Controller) complete(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	changed := meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type:               string(svmv1.MigrationRunning),
		Status:             metav1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
		Reason:             reasonCompleted,
		Message:            "Migration completed",
		ObservedGeneration: svm.Generation,
	})
	if !changed {
		return nil
	}
	succeeded := meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationSucceeded))
	if err := c.finishCRD(ctx, svm.Spec.Resource, succeeded); err != nil {
		return err
	}
	if _, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Storage version migration completed", "svm", klog.KObj(svm), "succeeded", succeeded)
	return nil
}

// promote starts a migration: StorageMigrating=True on its CRD, if the
// resource is a custom one, and Running=True on the migration.
func (c *Controller) promote(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	crd, err := c.crdFor(ctx, svm.Spec.Resource)
	if err != nil {
		return err
	}
	if crd != nil {
		msg := fmt.Sprintf("Migration %s is running", svm.Name)
		if err := c.applyCRDCondition(ctx, crd.GetName(), metav1.ConditionTrue, "MigrationRunning", msg, false); err != nil {
			return err
		}
	}
	if !addCondition(svm, svmv1.MigrationRunning, reasonRunning, runningMessage(0, 0, false, nil), metav1.NewTime(c.clock.Now())) {
		return nil
	}
	if _, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Storage version migration started", "svm", klog.KObj(svm), "resource", svm.Spec.Resource.String())
	return nil
}

// crdFor returns the CRD serving gr, nil when gr is not a custom resource.
func (c *Controller) crdFor(ctx context.Context, gr metav1.GroupResource) (*unstructured.Unstructured, error) {
	crd, err := c.dynamic.Resource(crdResource).Get(ctx, gr.Resource+"."+gr.Group, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return crd, err
}

// finishCRD sets StorageMigrating=False on the resource's CRD, if any; on
// success, when the condition observed the CRD's current generation, it
// also applies status.storedVersions as the storage version.
func (c *Controller) finishCRD(ctx context.Context, gr metav1.GroupResource, succeeded bool) error {
	crd, err := c.crdFor(ctx, gr)
	if err != nil || crd == nil {
		return err
	}
	reason, msg := "MigrationFailed", "The migration has failed"
	if succeeded {
		reason, msg = "MigrationSucceeded", "The migration has succeeded"
	}
	return c.applyCRDCondition(ctx, crd.GetName(), metav1.ConditionFalse, reason, msg, succeeded)
}

// applyCRDCondition applies the StorageMigrating condition to the CRD's
// status as the runner's field manager, with the read resourceVersion as a
// precondition, retrying conflicts with a fresh read. With
// updateStoredVersions (a finished successful migration) it also applies
// the storage version as storedVersions, when the condition observed the
// current generation; the message says whether it did.
func (c *Controller) applyCRDCondition(ctx context.Context, name string, status metav1.ConditionStatus, reason, msg string, updateStoredVersions bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := c.dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		message := msg
		var stored []any
		if updateStoredVersions {
			if observedCurrentGeneration(crd) {
				message += " and the stored versions have been updated"
				if v := storageVersion(crd); v != "" {
					stored = []any{v}
				}
			} else {
				message += " but the stored versions have not been updated due to a generation mismatch"
			}
		}
		crdStatus := map[string]any{
			"conditions": []any{map[string]any{
				"type":               storageMigrating,
				"status":             string(status),
				"lastTransitionTime": c.clock.Now().UTC().Format(time.RFC3339),
				"reason":             reason,
				"message":            message,
				"observedGeneration": crd.GetGeneration(),
			}},
		}
		if stored != nil {
			crdStatus["storedVersions"] = stored
		}
		apply := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": name, "resourceVersion": crd.GetResourceVersion()},
			"status":     crdStatus,
		}}
		_, err = c.dynamic.Resource(crdResource).ApplyStatus(ctx, name, apply, metav1.ApplyOptions{FieldManager: runnerFieldManager, Force: true})
		return err
	})
}

// observedCurrentGeneration reports whether the CRD's StorageMigrating
// condition observed its current generation: the storage version did not
// change during the migration.
func observedCurrentGeneration(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, cond := range conds {
		m, ok := cond.(map[string]any)
		if !ok || m["type"] != storageMigrating {
			continue
		}
		g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		return g == crd.GetGeneration()
	}
	return false
}

// storageVersion returns the name of the CRD's version with storage: true.
func storageVersion(crd *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if storage, _ := m["storage"].(bool); storage {
			name, _ := m["name"].(string)
			return name
		}
	}
	return ""
}
