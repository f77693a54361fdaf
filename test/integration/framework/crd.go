package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// CreateWidgetCRD creates a namespaced, schemaless CRD of kind Widget served
// at gvr (Resource "widgets", any group and version) and waits up to
// timeout until it can be listed.
func CreateWidgetCRD(t testing.TB, dyn dynamic.Interface, gvr schema.GroupVersionResource, timeout time.Duration) {
	t.Helper()
	CreateCRD(t, dyn, gvr, "Widget", false, timeout)
}

// CreateCRD creates a namespaced, schemaless CRD of kind served at gvr
// (Resource its plural), with a scale subresource on .spec.replicas and
// .status.replicas if scalable, and waits up to timeout until it can be
// listed.
func CreateCRD(t testing.TB, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind string, scalable bool, timeout time.Duration) {
	t.Helper()
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	version := map[string]any{
		"name": gvr.Version, "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object", "x-kubernetes-preserve-unknown-fields": true,
		}},
	}
	if scalable {
		version["subresources"] = map[string]any{"scale": map[string]any{
			"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
		}}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group":    gvr.Group,
			"scope":    "Namespaced",
			"names":    map[string]any{"plural": gvr.Resource, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{version},
		},
	}}
	if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	Eventually(t, timeout, func() (bool, error) {
		_, err := dyn.Resource(gvr).Namespace("default").List(context.Background(), metav1.ListOptions{})
		return err == nil, nil
	})
}
