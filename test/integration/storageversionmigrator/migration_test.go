// Package storageversionmigrator tests the storage-version-migrator-controller
// against a real kube-apiserver, which serves storagemigration.k8s.io/v1 by
// default in v1.37.
package storageversionmigrator

import (
	"context"
	"fmt"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"

	"github.com/kcm-dev/kcm/pkg/controller/storageversionmigrator"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func featureGate(t *testing.T, overrides map[string]bool) featuregate.FeatureGate {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := features.AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(overrides); err != nil {
		t.Fatal(err)
	}
	return fg
}

func newContext(t *testing.T, fg featuregate.FeatureGate) *controllermanager.ControllerContext {
	cc := framework.NewControllerContext(t, framework.StartEnv(t))
	cc.FeatureGate = fg
	cc.Config.GarbageCollectorController.EnableGarbageCollector = true
	return cc
}

// version returns a CRD version entry with a schemaless object schema.
func crdVersion(name string, storage bool) map[string]any {
	return map[string]any{
		"name": name, "served": true, "storage": storage,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object", "x-kubernetes-preserve-unknown-fields": true,
		}},
	}
}

func TestGates(t *testing.T) {
	ctx := context.Background()
	for _, off := range []featuregate.Feature{features.StorageVersionMigrator, features.InformerResourceVersion} {
		cc := newContext(t, featureGate(t, map[string]bool{string(off): false}))
		c, err := storageversionmigrator.New(ctx, cc, names.StorageVersionMigrator)
		if err != nil || c != nil {
			t.Errorf("%s off: New = %v, %v; want nil, nil", off, c, err)
		}
	}
	cc := newContext(t, featureGate(t, nil))
	cc.Config.GarbageCollectorController.EnableGarbageCollector = false
	if _, err := storageversionmigrator.New(ctx, cc, names.StorageVersionMigrator); err == nil {
		t.Error("want an error with the garbage collector disabled")
	}
}

func TestMigratesCustomResources(t *testing.T) {
	ctx := context.Background()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	// A CRD stored at v1, with objects, then switched to store v2.
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "gizmos.svm.kcm.dev"},
		"spec": map[string]any{
			"group":    "svm.kcm.dev",
			"scope":    "Namespaced",
			"names":    map[string]any{"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
			"versions": []any{crdVersion("v1", true), crdVersion("v2", false)},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gizmos := schema.GroupVersionResource{Group: "svm.kcm.dev", Version: "v2", Resource: "gizmos"}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := dyn.Resource(gizmos).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	before := map[string]string{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("g%d", i)
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "svm.kcm.dev/v1", "kind": "Gizmo",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec":     map[string]any{"n": int64(i)},
		}}
		created, err := dyn.Resource(gizmos.GroupResource().WithVersion("v1")).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[name] = created.GetResourceVersion()
	}
	live, err := dyn.Resource(crdGVR).Get(ctx, "gizmos.svm.kcm.dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(live.Object, []any{crdVersion("v1", false), crdVersion("v2", true)}, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdGVR).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	cc := newContext(t, featureGate(t, nil))
	c, err := storageversionmigrator.New(ctx, cc, names.StorageVersionMigrator)
	if err != nil || c == nil {
		t.Fatalf("New: %v, %v", c, err)
	}
	if c.Name() != names.StorageVersionMigrator {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)

	svms := client.StoragemigrationV1().StorageVersionMigrations()
	migration := &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos"},
		Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "svm.kcm.dev", Resource: "gizmos"}},
	}
	if _, err := svms.Create(ctx, migration, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *svmv1.StorageVersionMigration
	framework.Eventually(t, timeout, func() (bool, error) {
		got, err = svms.Get(ctx, "gizmos", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionFalse(got.Status.Conditions, string(svmv1.MigrationRunning)), nil
	})
	if got.Status.ResourceVersion == "" {
		t.Error("status.resourceVersion not set")
	}
	succeeded := meta.FindStatusCondition(got.Status.Conditions, string(svmv1.MigrationSucceeded))
	if succeeded == nil || succeeded.Status != metav1.ConditionTrue || succeeded.Reason != "StorageVersionMigrationSucceeded" || succeeded.Message != "Migration completed" {
		t.Errorf("Succeeded = %+v", succeeded)
	}
	running := meta.FindStatusCondition(got.Status.Conditions, string(svmv1.MigrationRunning))
	if running.Reason != "MigrationCompleted" || running.Message != "Migration completed" {
		t.Errorf("Running = %+v", running)
	}
	// Every object was rewritten (stored at v2 now): a new resourceVersion,
	// and the controller's field manager in managedFields.
	for name, rv := range before {
		obj, err := dyn.Resource(gizmos).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if obj.GetResourceVersion() == rv {
			t.Errorf("%s was not rewritten (resourceVersion %s)", name, rv)
		}
	}
	// The CRD's StorageMigrating condition tells the migration's end.
	framework.Eventually(t, timeout, func() (bool, error) {
		live, err := dyn.Resource(crdGVR).Get(ctx, "gizmos.svm.kcm.dev", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "StorageMigrating" {
				stored, _, _ := unstructured.NestedStringSlice(live.Object, "status", "storedVersions")
				done := m["status"] == "False" && m["reason"] == "MigrationSucceeded"
				if done && (len(stored) != 1 || stored[0] != "v2" || m["message"] != "The migration has succeeded and the stored versions have been updated") {
					t.Errorf("after the migration: StorageMigrating %v, storedVersions %v", m, stored)
				}
				return done, nil
			}
		}
		return false, nil
	})
}

func TestUnmigratableResourceFails(t *testing.T) {
	ctx := context.Background()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := newContext(t, featureGate(t, nil))
	c, err := storageversionmigrator.New(ctx, cc, names.StorageVersionMigrator)
	if err != nil || c == nil {
		t.Fatalf("New: %v, %v", c, err)
	}
	framework.StartController(t, cc, c)
	// TokenReviews cannot be listed, patched or updated.
	svms := client.StoragemigrationV1().StorageVersionMigrations()
	if _, err := svms.Create(ctx, &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "tokenreviews"},
		Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		got, err := svms.Get(ctx, "tokenreviews", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		failed := meta.FindStatusCondition(got.Status.Conditions, string(svmv1.MigrationFailed))
		if failed == nil {
			return false, nil
		}
		want := `resource "authentication.k8s.io/v1, Resource=tokenreviews" does not support discovery operations: [update patch list]`
		if failed.Reason != "StorageVersionMigrationFailed" || failed.Message != want {
			t.Errorf("Failed = %+v", failed)
		}
		return true, nil
	})
}
