package rootcacertpublisher

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func TestNewRootCA(t *testing.T) {
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("ca.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.crt", certPEM)
	bad := write("bad.crt", []byte("not a certificate"))
	clientCA, _, err := certutil.GenerateSelfSignedCertKey("client-ca.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		file      string
		want      []byte
		wantErrIn string
	}{
		{name: "from --root-ca-file", file: good, want: certPEM},
		{name: "from client config", want: clientCA},
		{name: "file not PEM", file: bad, wantErrIn: bad},
		{name: "file missing", file: filepath.Join(dir, "missing.crt"), wantErrIn: "missing.crt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cfg := &config.ComponentConfig{}
			cfg.SAController.RootCAFile = tc.file
			cc := &controllermanager.ControllerContext{
				ClientBuilder: clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{
					Host:            "https://127.0.0.1:6443",
					TLSClientConfig: restclient.TLSClientConfig{CAData: clientCA},
				}},
				InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
				Config:          cfg,
			}
			got, err := New(ctx, cc, "root-ca-certificate-publisher-controller")
			if tc.wantErrIn != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrIn) {
					t.Fatalf("New() error = %v, want one naming %q", err, tc.wantErrIn)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			c := got.(*Controller)
			defer c.queue.ShutDown()
			if c.Name() != "root-ca-certificate-publisher-controller" {
				t.Errorf("Name() = %q", c.Name())
			}
			if !bytes.Equal(c.rootCA, tc.want) {
				t.Errorf("root CA = %q, want %q", c.rootCA, tc.want)
			}
		})
	}
}
