package clustertrustbundlepublisher

import (
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2/ktesting"
)

var v1GVR = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "clustertrustbundles"}

func newCA(t *testing.T, host string) []byte {
	t.Helper()
	pem, _, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pem
}

func staticCA(t *testing.T, pem []byte) dynamiccertificates.CAContentProvider {
	t.Helper()
	ca, err := dynamiccertificates.NewStaticCAContent(caName, pem)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func newDynamic(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{
			v1GVR: "ClusterTrustBundleList",
			v1GVR.GroupVersion().WithResource("clustertrustbundles"):                             "ClusterTrustBundleList",
			{Group: "certificates.k8s.io", Version: "v1beta1", Resource: "clustertrustbundles"}:  "ClusterTrustBundleList",
			{Group: "certificates.k8s.io", Version: "v1alpha1", Resource: "clustertrustbundles"}: "ClusterTrustBundleList",
		}, objs...)
}

func TestBundleName(t *testing.T) {
	// sha256("abc") = ba7816bf8f01cfea414140de5dae2223…
	if got, want := BundleName(SignerName, []byte("abc")), "kubernetes.io:kube-apiserver-serving:ba7816bf8f01cfea414140de"; got != want {
		t.Errorf("BundleName = %q, want %q", got, want)
	}
}

// syncFixture is a controller whose bundle cache holds objs.
func syncFixture(t *testing.T, ca []byte, objs ...*unstructured.Unstructured) (*Controller, *bundles, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	var robjs []runtime.Object
	for _, o := range objs {
		robjs = append(robjs, o.DeepCopy())
	}
	dyn := newDynamic(robjs...)
	c := newController("kube-apiserver-serving-clustertrustbundle-publisher-controller", SignerName, staticCA(t, ca), dyn, fake.NewClientset().Discovery())
	t.Cleanup(c.queue.ShutDown)
	_, ctx := ktesting.NewTestContext(t)
	b, err := c.newBundles(ctx, v1GVR)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := b.informer.GetStore().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return c, b, dyn
}

// writes lists the sync's writes as "verb name".
func writes(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		switch a.GetVerb() {
		case "create", "update":
			out = append(out, a.GetVerb()+" "+a.(core.CreateAction).GetObject().(*unstructured.Unstructured).GetName())
		case "delete":
			out = append(out, "delete "+a.(core.DeleteAction).GetName())
		}
	}
	return out
}

func TestSync(t *testing.T) {
	ca := newCA(t, "ca.example")
	name := BundleName(SignerName, ca)
	v1 := v1GVR.GroupVersion()
	edited := newBundle(v1, name, SignerName, "tampered")
	stale := newBundle(v1, BundleName(SignerName, []byte("old")), SignerName, "old")
	foreign := newBundle(v1, "example.com:other:abc", "example.com/other", "other")
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		want []string
	}{
		{name: "created", want: []string{"create " + name}},
		{name: "up to date", objs: []*unstructured.Unstructured{newBundle(v1, name, SignerName, string(ca))}},
		{name: "edited: restored", objs: []*unstructured.Unstructured{edited}, want: []string{"update " + name}},
		{name: "stale bundle of the signer deleted, other signers left", objs: []*unstructured.Unstructured{stale, foreign},
			want: []string{"create " + name, "delete " + stale.GetName()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c, b, dyn := syncFixture(t, ca, tc.objs...)
			if err := c.sync(ctx, b); err != nil {
				t.Fatal(err)
			}
			if got := writes(dyn); !slices.Equal(got, tc.want) {
				t.Errorf("writes = %v, want %v", got, tc.want)
			}
			if tc.want == nil {
				return
			}
			got, err := dyn.Resource(v1GVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if specString(got, "trustBundle") != string(ca) || specString(got, "signerName") != SignerName ||
				got.GetLabels() != nil || got.GetAnnotations() != nil {
				t.Errorf("bundle = %v", got.Object)
			}
		})
	}
}

func TestSyncErrors(t *testing.T) {
	ca := newCA(t, "ca.example")
	v1 := v1GVR.GroupVersion()
	stale1 := newBundle(v1, BundleName(SignerName, []byte("old1")), SignerName, "old1")
	stale2 := newBundle(v1, BundleName(SignerName, []byte("old2")), SignerName, "old2")

	_, ctx := ktesting.NewTestContext(t)
	c, b, dyn := syncFixture(t, ca)
	dyn.PrependReactor("create", "clustertrustbundles", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1GVR.GroupResource(), "x", errors.New("no attest"))
	})
	if err := c.sync(ctx, b); !apierrors.IsForbidden(err) {
		t.Errorf("create refused: sync error = %v", err)
	}

	// One deletion failing does not stop the other; the sync is retried.
	c, b, dyn = syncFixture(t, ca, newBundle(v1, BundleName(SignerName, ca), SignerName, string(ca)), stale1, stale2)
	dyn.PrependReactor("delete", "clustertrustbundles", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.DeleteAction).GetName() == stale1.GetName() {
			return true, nil, apierrors.NewInternalError(errors.New("boom"))
		}
		return false, nil, nil
	})
	if err := c.sync(ctx, b); err == nil {
		t.Error("a failed deletion is not retried")
	}
	if got, want := writes(dyn), []string{"delete " + stale1.GetName(), "delete " + stale2.GetName()}; !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("writes = %v, want %v", got, want)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
