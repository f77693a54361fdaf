package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	// SkipEnv set to "1" turns missing binaries into skipped tests.
	SkipEnv = "KCM_SKIP_INTEGRATION"
	// AssetsEnv names the directory holding kube-apiserver and etcd.
	AssetsEnv = "KUBEBUILDER_ASSETS"
)

// requiredBinaries are what envtest starts.
var requiredBinaries = []string{"etcd", "kube-apiserver"}

var shared struct {
	sync.Mutex
	inMain bool
	args   map[string][]string // extra kube-apiserver flags (Main's APIServerFlag options)
	env    *envtest.Environment
	cfg    *rest.Config
	err    error
}

// Option changes the package's shared control plane.
type Option func()

// APIServerFlag sets a kube-apiserver flag of the package's control plane,
// e.g. APIServerFlag("feature-gates", "StorageVersionAPI=true") or
// APIServerFlag("runtime-config", "resource.k8s.io/v1alpha3=true") for an
// API that is off by default. A flag given twice keeps the last value.
func APIServerFlag(name, value string) Option {
	return func() { shared.args[name] = []string{value} }
}

// Main runs the test package's tests and stops the shared control plane,
// if a test started one, before exiting. Call it from TestMain.
func Main(m *testing.M, opts ...Option) {
	ctrllog.SetLogger(klog.Background())
	shared.Lock()
	shared.inMain = true
	shared.args = map[string][]string{}
	for _, o := range opts {
		o()
	}
	shared.Unlock()

	code := m.Run()

	shared.Lock()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "framework: stopping the control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		shared.env = nil
	}
	shared.Unlock()
	os.Exit(code)
}

// StartEnv returns a cluster-admin rest.Config for the package's shared
// kube-apiserver, starting it (and etcd) on first use. Each call returns a
// fresh copy the caller may modify.
func StartEnv(t testing.TB) *rest.Config {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.inMain {
		t.Fatal("framework.StartEnv: the test package needs func TestMain(m *testing.M) { framework.Main(m) }")
	}
	if shared.cfg == nil && shared.err == nil {
		dir, err := assetsDir()
		if err != nil {
			t.Fatalf("framework: %v", err)
		}
		if missing := missingBinaries(dir); len(missing) > 0 {
			msg := fmt.Sprintf("integration test binaries %s not found in %s (%s); build them with hack/tools/build.sh, or set %s=1 to skip integration tests",
				strings.Join(missing, ", "), dir, AssetsEnv, SkipEnv)
			if os.Getenv(SkipEnv) == "1" {
				t.Skip(msg)
			}
			t.Fatal(msg)
		}
		env := &envtest.Environment{BinaryAssetsDirectory: dir}
		if len(shared.args) > 0 {
			apiserver := env.ControlPlane.GetAPIServer()
			for name, values := range shared.args {
				apiserver.Configure().Set(name, values...)
			}
		}
		shared.cfg, shared.err = env.Start()
		if shared.err != nil {
			// A partly started control plane still has processes to end.
			_ = env.Stop()
		} else {
			shared.env = env
		}
	}
	if shared.err != nil {
		t.Fatalf("framework: starting kube-apiserver and etcd: %v", shared.err)
	}
	return rest.CopyConfig(shared.cfg)
}

// assetsDir returns $KUBEBUILDER_ASSETS or, when unset, <repo root>/_output/bin.
func assetsDir() (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("%s is unset and the repository root was not found: %w", AssetsEnv, err)
	}
	return filepath.Join(root, "_output", "bin"), nil
}

// repoRoot walks up from the working directory (the test's package
// directory) to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func missingBinaries(dir string) []string {
	var missing []string
	for _, b := range requiredBinaries {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	return missing
}
