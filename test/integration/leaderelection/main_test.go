package leaderelection

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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

// process is one running controller manager; it is killed when the test
// ends, and its output logged if the test failed.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// start runs binary with args against the test's apiserver (kubeconfig),
// without an HTTPS endpoint.
func start(t *testing.T, binary, kubeconfig string, args ...string) *process {
	t.Helper()
	args = append([]string{"--kubeconfig=" + kubeconfig, "--secure-port=0", "--v=2"}, args...)
	p := &process{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL, 10*time.Second)
		if t.Failed() {
			t.Logf("%s %s logged:\n%s", filepath.Base(binary), strings.Join(args, " "), p.log())
		}
	})
	return p
}

// stop sends sig and waits up to timeout for the process to exit; it
// reports whether it exited in time.
func (p *process) stop(sig syscall.Signal, timeout time.Duration) bool {
	if p.exited() {
		return true
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return false
	}
}

// writeKubeconfig writes cfg (envtest's admin) as a kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// eventually polls cond every 100ms until it returns true, failing the
// test after timeout; errors from cond are kept for the message.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
