package serviceaccounttoken

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func TestNew(t *testing.T) {
	dir := t.TempDir()
	pem, err := keyutil.MarshalPrivateKeyToPEM(testKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(keyFile, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	clientCA, _, err := certutil.GenerateSelfSignedCertKey("client-ca.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	newCC := func(key string) *controllermanager.ControllerContext {
		cfg := &config.ComponentConfig{}
		cfg.SAController.ServiceAccountKeyFile = key
		cfg.SAController.ConcurrentSATokenSyncs = 3
		return &controllermanager.ControllerContext{
			ClientBuilder: clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{
				Host: "https://127.0.0.1:6443", TLSClientConfig: restclient.TLSClientConfig{CAData: clientCA},
			}},
			InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
			Config:          cfg,
		}
	}
	_, ctx := ktesting.NewTestContext(t)

	if c, err := New(ctx, newCC(""), "serviceaccount-token-controller"); c != nil || err != nil {
		t.Errorf("without a key: New() = %v, %v; want nil, nil", c, err)
	}
	if _, err := New(ctx, newCC(filepath.Join(dir, "missing")), "serviceaccount-token-controller"); err == nil {
		t.Error("missing key file: want an error")
	}
	got, err := New(ctx, newCC(keyFile), "serviceaccount-token-controller")
	if err != nil {
		t.Fatal(err)
	}
	c := got.(*Controller)
	defer c.saQueue.ShutDown()
	defer c.secretQueue.ShutDown()
	if c.Name() != "serviceaccount-token-controller" || c.workers != 3 || !bytes.Equal(c.rootCA, clientCA) {
		t.Errorf("controller = name %q, workers %d, rootCA %q", c.Name(), c.workers, c.rootCA)
	}
}
