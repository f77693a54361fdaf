package clustertrustbundlepublisher

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	resource = "clustertrustbundles"
	kind     = "ClusterTrustBundle"
	// discoveryRetry is the wait between discovery attempts that failed.
	discoveryRetry = 10 * time.Second
)

// versions are certificates.k8s.io's versions, in upstream's order of
// preference. Their ClusterTrustBundles have the same fields, so one
// unstructured code path serves all three.
var versions = []schema.GroupVersion{
	{Group: "certificates.k8s.io", Version: "v1"},
	{Group: "certificates.k8s.io", Version: "v1beta1"},
	{Group: "certificates.k8s.io", Version: "v1alpha1"},
}

// servedVersion returns the first of versions whose discovery lists
// clustertrustbundles. A failed discovery is retried until ctx ends
// (upstream fails the controller manager's start instead). ok is false when
// none is served or ctx ended.
func (c *Controller) servedVersion(ctx context.Context) (gvr schema.GroupVersionResource, ok bool) {
	logger := klog.FromContext(ctx)
	_ = wait.PollUntilContextCancel(ctx, c.retry, true, func(context.Context) (bool, error) {
		for _, gv := range versions {
			served, err := c.serves(gv)
			if err != nil {
				logger.Error(err, "Discovery failed for ClusterTrustBundle; retrying", "groupVersion", gv)
				return false, nil
			}
			if served {
				gvr, ok = gv.WithResource(resource), true
				return true, nil
			}
		}
		logger.Info("no known scheme version was found for clustertrustbundles, cannot start kube-apiserver-serving-clustertrustbundle-publisher-controller")
		return true, nil
	})
	return gvr, ok
}

// serves reports whether discovery of gv lists clustertrustbundles; a
// partial result that lists it counts even with an error, as upstream.
func (c *Controller) serves(gv schema.GroupVersion) (bool, error) {
	list, err := c.disco.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Name == resource {
				return true, nil
			}
		}
	}
	return false, err
}

// bundles is the ClusterTrustBundle API of one version, for one signer:
// an informer on that signer's bundles and a client to write them.
type bundles struct {
	gv       schema.GroupVersion
	client   dynamic.ResourceInterface
	informer cache.SharedIndexInformer
}

// newBundles builds the informer on the signer's bundles (a field
// selector on spec.signerName, as upstream) whose every event queues a
// sync.
func (c *Controller) newBundles(ctx context.Context, gvr schema.GroupVersionResource) (*bundles, error) {
	selector := fields.OneTermEqualSelector("spec.signerName", c.signerName).String()
	inf := dynamicinformer.NewFilteredDynamicInformer(c.dyn, gvr, metav1.NamespaceAll, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = selector }).Informer()
	if err := inf.SetTransform(controllermanager.TrimManagedFields); err != nil {
		return nil, err
	}
	poke := func(any) { c.queue.Add(queueKey) }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, newObj any) { poke(newObj) },
		DeleteFunc: poke,
	}); err != nil {
		return nil, fmt.Errorf("failed to register ClusterTrustBundle event handler: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Publishing ClusterTrustBundle", "groupVersion", gvr.GroupVersion(), "signerName", c.signerName)
	return &bundles{gv: gvr.GroupVersion(), client: c.dyn.Resource(gvr), informer: inf}, nil
}

// get returns the cached bundle named name, or nil.
func (b *bundles) get(name string) (*unstructured.Unstructured, error) {
	obj, exists, err := b.informer.GetStore().GetByKey(name)
	if err != nil || !exists {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the ClusterTrustBundle cache", obj)
	}
	return u, nil
}

// newBundle is a ClusterTrustBundle of version gv as upstream creates it:
// a name, a signer and the bundle, nothing else.
func newBundle(gv schema.GroupVersion, name, signerName, trustBundle string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"signerName": signerName, "trustBundle": trustBundle},
	}}
}

// specString reads spec.<field> of a bundle ("" when absent).
func specString(u *unstructured.Unstructured, field string) string {
	s, _, _ := unstructured.NestedString(u.Object, "spec", field)
	return s
}
