package node

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestApply renders every manifest and creates its objects on a fake
// client: templates, YAML and kinds all known.
func TestApply(t *testing.T) {
	v := Values{ControlPlaneEndpoint: "https://192.0.2.2:6443", ClusterCIDR: "10.244.0.0/16", DNSIP: "10.96.0.10",
		DNSDomain: "cluster.local", KubeProxyImage: KubeProxyImage, CoreDNSImage: CoreDNSImage}
	lists := map[schema.GroupVersionResource]string{}
	for kind, gvr := range resources {
		lists[gvr] = kind + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	ctx := context.Background()
	for _, m := range []string{"bootstrap", "kube-proxy", "coredns"} {
		if err := Apply(ctx, dyn, m, v); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		// A second time: what exists is left alone.
		if err := Apply(ctx, dyn, m, v); err != nil {
			t.Fatalf("%s again: %v", m, err)
		}
	}
	ds, err := dyn.Resource(resources["DaemonSet"]).Namespace("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != KubeProxyImage {
		t.Errorf("kube-proxy image %v", img)
	}
	svc, err := dyn.Resource(resources["Service"]).Namespace("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip != v.DNSIP {
		t.Errorf("kube-dns clusterIP %q", ip)
	}
}
