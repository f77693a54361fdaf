package kcm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

var (
	binary  string // the kube-controller-manager under test
	env     *envtest.Environment
	admin   *rest.Config
	kcmConf string // kubeconfig for the controller manager (system:masters)
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "kcm-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	// Always build the binary from the tree under test.
	binary = filepath.Join(tmp, "kube-controller-manager")
	build := exec.Command("go", "build", "-o", binary, "./cmd/kube-controller-manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kube-controller-manager:", err)
		return 1
	}

	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "_output", "bin"))
	}
	env = &envtest.Environment{}
	if admin, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest (run hack/tools/build.sh first):", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	user, err := env.ControlPlane.AddUser(envtest.User{Name: "system:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	data, err := user.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kcmConf = filepath.Join(tmp, "controller-manager.conf")
	if err := os.WriteFile(kcmConf, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// process is one running kube-controller-manager and its HTTPS port.
type process struct {
	*framework.Process
	port int
}

// start runs the binary with the base flags of a kubeadm control plane
// plus extra, and stops it when the test ends.
func start(t *testing.T, extra ...string) *process {
	t.Helper()
	port := framework.FreePort(t)
	return &process{port: port, Process: framework.StartProcess(t, binary, append([]string{
		"--kubeconfig=" + kcmConf,
		"--authentication-kubeconfig=" + kcmConf,
		"--authorization-kubeconfig=" + kcmConf,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--v=2",
	}, extra...)...)}
}

func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
