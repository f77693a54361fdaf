package kcm

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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

// process is one running kube-controller-manager.
type process struct {
	cmd  *exec.Cmd
	port int
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Log returns everything the process printed so far.
func (p *process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs the binary with the base flags of a kubeadm control plane
// plus extra, and stops it when the test ends.
func start(t *testing.T, extra ...string) *process {
	t.Helper()
	p := &process{port: freePort(t), done: make(chan struct{})}
	args := append([]string{
		"--kubeconfig=" + kcmConf,
		"--authentication-kubeconfig=" + kcmConf,
		"--authorization-kubeconfig=" + kcmConf,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.port),
		"--v=2",
	}, extra...)
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL, 10*time.Second)
		if t.Failed() {
			t.Logf("kube-controller-manager on :%d logged:\n%s", p.port, p.Log())
		}
	})
	return p
}

// stop sends sig and waits up to timeout for the process to exit; it
// reports whether it exited.
func (p *process) stop(sig syscall.Signal, timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	default:
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond every 100ms until it returns true or the timeout
// passes; errors from cond are kept for the failure message.
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
