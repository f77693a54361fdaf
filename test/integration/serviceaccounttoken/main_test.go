package serviceaccounttoken

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// This package starts its own control plane instead of framework.StartEnv's
// shared one: the test signs tokens with the key the kube-apiserver verifies
// them with, which lives in the APIServer's cert dir that only the
// envtest.Environment exposes. Binaries are found as framework finds them.

var env struct {
	sync.Mutex
	env    *envtest.Environment
	cfg    *rest.Config
	keyDir string
	err    error
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(klog.Background())
	code := m.Run()
	env.Lock()
	if env.env != nil {
		if err := env.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	env.Unlock()
	os.Exit(code)
}

// startEnv returns a cluster-admin config and the path of the private key
// the kube-apiserver's --service-account-key-file matches.
func startEnv(t *testing.T) (*rest.Config, string) {
	t.Helper()
	env.Lock()
	defer env.Unlock()
	if env.cfg == nil && env.err == nil {
		dir, err := assetsDir()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"etcd", "kube-apiserver"} {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				msg := fmt.Sprintf("integration test binary %s not found in %s; build it with hack/tools/build.sh", b, dir)
				if os.Getenv(framework.SkipEnv) == "1" {
					t.Skip(msg)
				}
				t.Fatal(msg)
			}
		}
		e := &envtest.Environment{BinaryAssetsDirectory: dir}
		env.cfg, env.err = e.Start()
		if env.err != nil {
			_ = e.Stop()
		} else {
			env.env = e
			env.keyDir = e.ControlPlane.APIServer.CertDir
		}
	}
	if env.err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", env.err)
	}
	return rest.CopyConfig(env.cfg), filepath.Join(env.keyDir, "sa-signer.key")
}

func assetsDir() (string, error) {
	if dir := os.Getenv(framework.AssetsEnv); dir != "" {
		return dir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "_output", "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
