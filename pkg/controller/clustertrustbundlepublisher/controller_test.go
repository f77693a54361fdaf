package clustertrustbundlepublisher

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	core "k8s.io/client-go/testing"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func served(versions ...string) *fake.Clientset {
	client := fake.NewClientset()
	for _, v := range versions {
		client.Resources = append(client.Resources, &metav1.APIResourceList{
			GroupVersion: "certificates.k8s.io/" + v,
			APIResources: []metav1.APIResource{{Name: "clustertrustbundles", Kind: "ClusterTrustBundle"}},
		})
	}
	return client
}

func TestServedVersion(t *testing.T) {
	tests := []struct {
		name   string
		served []string
		want   string
	}{
		{name: "v1", served: []string{"v1alpha1", "v1beta1", "v1"}, want: "v1"},
		{name: "beta and alpha", served: []string{"v1alpha1", "v1beta1"}, want: "v1beta1"},
		{name: "alpha only", served: []string{"v1alpha1"}, want: "v1alpha1"},
		{name: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := newController("x", SignerName, staticCA(t, newCA(t, "ca")), newDynamic(), served(tc.served...).Discovery())
			defer c.queue.ShutDown()
			gvr, ok := c.servedVersion(ctx)
			if ok != (tc.want != "") || gvr.Version != tc.want {
				t.Errorf("servedVersion = %v, %v; want %q", gvr, ok, tc.want)
			}
		})
	}
}

func TestDiscoveryRetried(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := served("v1")
	failures := 2
	client.PrependReactor("get", "resource", func(core.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, apierrors.NewServiceUnavailable("starting")
		}
		return false, nil, nil
	})
	c := newController("x", SignerName, staticCA(t, newCA(t, "ca")), newDynamic(), client.Discovery())
	defer c.queue.ShutDown()
	c.retry = time.Millisecond
	if gvr, ok := c.servedVersion(ctx); !ok || gvr.Version != "v1" {
		t.Errorf("servedVersion = %v, %v after failures", gvr, ok)
	}
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(good, newCA(t, "ca"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		file      string
		caData    []byte
		wantNil   bool
		wantErrIn string
	}{
		{name: "--root-ca-file", file: good},
		{name: "kubeconfig CA", caData: newCA(t, "kubeconfig-ca")},
		{name: "no CA: not started", wantNil: true},
		{name: "bad file", file: bad, wantErrIn: bad},
		{name: "missing file", file: filepath.Join(dir, "missing.crt"), wantErrIn: "missing.crt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cfg := &config.ComponentConfig{}
			cfg.SAController.RootCAFile = tc.file
			cc := &controllermanager.ControllerContext{
				ClientBuilder: clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{
					Host: "https://127.0.0.1:6443", TLSClientConfig: restclient.TLSClientConfig{CAData: tc.caData},
				}},
				InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
				Config:          cfg,
			}
			got, err := New(ctx, cc, "kube-apiserver-serving-clustertrustbundle-publisher-controller")
			if tc.wantErrIn != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrIn) {
					t.Fatalf("New() error = %v, want one naming %q", err, tc.wantErrIn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != tc.wantNil {
				t.Fatalf("New() = %v, want nil %v", got, tc.wantNil)
			}
			if got != nil {
				c := got.(*Controller)
				c.queue.ShutDown()
				if (c.runCA != nil) != (tc.file != "") {
					t.Errorf("CA file watched = %v, want %v", c.runCA != nil, tc.file != "")
				}
			}
		})
	}
}

// TestRun drives the controller with a CA file: the bundle is published,
// restored when deleted, a stale one goes, and when the file changes the
// new CA's bundle replaces the old one; a file replaced by garbage keeps
// the last good CA. Run returns after cancellation.
func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	file := filepath.Join(t.TempDir(), "ca.crt")
	ca1, ca2 := newCA(t, "ca1"), newCA(t, "ca2")
	if err := os.WriteFile(file, ca1, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.ComponentConfig{}
	cfg.SAController.RootCAFile = file
	ca, runCA, err := caProvider(&controllermanager.ControllerContext{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	stale := newBundle(v1GVR.GroupVersion(), BundleName(SignerName, []byte("old")), SignerName, "old")
	dyn := newDynamic(stale)
	c := newController("kube-apiserver-serving-clustertrustbundle-publisher-controller", SignerName, ca, dyn, served("v1beta1", "v1").Discovery())
	c.runCA = runCA
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()

	bundles := dyn.Resource(v1GVR)
	waitOnly := func(what string, want []byte) {
		t.Helper()
		name := BundleName(SignerName, want)
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := bundles.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			return len(list.Items) == 1 && list.Items[0].GetName() == name && specString(&list.Items[0], "trustBundle") == string(want), nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	waitOnly("first CA published, stale bundle gone", ca1)
	if err := bundles.Delete(ctx, BundleName(SignerName, ca1), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitOnly("deleted bundle restored", ca1)
	if err := os.WriteFile(file, ca2, 0o600); err != nil {
		t.Fatal(err)
	}
	waitOnly("new CA published, old bundle gone", ca2)
	if err := os.WriteFile(file, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The reload fails and keeps ca2; a deletion proves the controller
	// still works from it.
	if err := bundles.Delete(ctx, BundleName(SignerName, ca2), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitOnly("last good CA kept", ca2)

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

// TestRunNotServed: with no version served, Run waits for cancellation
// and writes nothing.
func TestRunNotServed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dyn := newDynamic()
	c := newController("x", SignerName, staticCA(t, newCA(t, "ca")), dyn, served().Discovery())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	select {
	case <-done:
		t.Fatal("Run returned before cancellation")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	if a := dyn.Actions(); len(a) != 0 {
		t.Errorf("actions = %v", a)
	}
}
