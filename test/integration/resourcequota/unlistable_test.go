package resourcequota

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// brokenCRD serves things at v1 (storage) and v2 (preferred) with a
// conversion webhook nobody serves: objects stored as v1 cannot be listed
// at v2, so the informer of the preferred version never syncs.
func brokenCRD() *unstructured.Unstructured {
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "things.broken.example.com"},
		"spec": map[string]any{
			"group": "broken.example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
			"versions": []any{version("v1", true), version("v2", false)},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert"},
			}},
		},
	}}
}

// A resource the API server cannot list is reported under /readyz and its
// usage left unmeasured; it holds back neither the quota's other limits
// nor other quotas (upstream waits for every monitor before any sync).
func TestUnlistableResourceDoesNotBlock(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.dyn.Resource(crds).Create(ctx, brokenCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.dyn.Resource(crds).Delete(ctx, "things.broken.example.com", metav1.DeleteOptions{}) })
	ns := e.namespace()
	things := schema.GroupVersionResource{Group: "broken.example.com", Version: "v1", Resource: "things"}
	thing := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "broken.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t1"}}}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := e.dyn.Resource(things).Namespace(ns).Create(ctx, thing, metav1.CreateOptions{})
		return err == nil, nil
	})
	e.createQuota(ns, "mixed", rl("count/things.broken.example.com", "5", "pods", "2"))
	other := e.namespace()
	e.createQuota(other, "pods", rl("pods", "2"))

	c, _ := e.start()
	e.waitUsed(other, "pods", rl("pods", "0"))
	e.waitUsed(ns, "mixed", rl("pods", "0"))
	err := c.(controllermanager.ReadinessReporter).ReadinessCheck(nil)
	if err == nil || !strings.Contains(err.Error(), "things") {
		t.Errorf("ReadinessCheck = %v, want the things monitor reported", err)
	}
	e.mustCreatePod(other, pod("p"))
	e.deletePod(other, "p")
	e.waitUsed(other, "pods", rl("pods", "0"))
}
