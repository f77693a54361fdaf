package leaderelection

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// The binaries under test, built by TestMain from the tree.
var kcmBinary, ccmBinary string

// TestMain builds both binaries stamped with the version `make build`
// gives them, and runs the tests on a kube-apiserver with coordinated
// leader election on (its gate and the LeaseCandidate API, which is beta
// and off by default in v1.37).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "leaderelection-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kcmBinary = filepath.Join(dir, "kube-controller-manager")
	ccmBinary = filepath.Join(dir, "cloud-controller-manager")
	bin := features.BinaryVersion()
	const pkg = "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-X %s.gitVersion=%s-kcm -X %s.gitMajor=%d -X %s.gitMinor=%d",
		pkg, features.UpstreamKubernetesVersion, pkg, bin.Major(), pkg, bin.Minor())
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", dir+"/",
		"github.com/kcm-dev/kcm/cmd/kube-controller-manager", "github.com/kcm-dev/kcm/cmd/cloud-controller-manager")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the controller managers:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	framework.Main(m,
		framework.APIServerFlag("feature-gates", "CoordinatedLeaderElection=true"),
		framework.APIServerFlag("runtime-config", "coordination.k8s.io/v1beta1=true"))
}

// start runs binary with args against the test's apiserver (kubeconfig),
// without an HTTPS endpoint.
func start(t *testing.T, binary, kubeconfig string, args ...string) *framework.Process {
	t.Helper()
	return framework.StartProcess(t, binary, append([]string{"--kubeconfig=" + kubeconfig, "--secure-port=0", "--v=2"}, args...)...)
}
