package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubectlEnv names a kubectl binary to use instead of
// <repo root>/_output/bin/kubectl.
const KubectlEnv = "KCM_KUBECTL"

// Kubectl is the real kubectl binary, run as cfg's user against cfg's
// apiserver through a kubeconfig of its own.
type Kubectl struct {
	t          testing.TB
	bin        string
	kubeconfig string
}

// NewKubectl returns a Kubectl for cfg (from StartEnv). It skips the test
// when the binary is missing (`hack/tools/build.sh kubectl` builds it).
func NewKubectl(t testing.TB, cfg *rest.Config) *Kubectl {
	t.Helper()
	bin := os.Getenv(KubectlEnv)
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("framework: %v", err)
		}
		bin = filepath.Join(root, "_output", "bin", "kubectl")
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Skipf("kubectl not found at %s: build it with `hack/tools/build.sh kubectl`, or set %s to a kubectl binary", bin, KubectlEnv)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData,
		CertificateAuthority: cfg.CAFile, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatalf("framework: writing a kubeconfig for kubectl: %v", err)
	}
	return &Kubectl{t: t, bin: bin, kubeconfig: path}
}

// Run runs kubectl with args (within a minute) and returns its standard
// output; a non-zero exit is an error carrying its standard error.
func (k *Kubectl) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// MustRun is Run failing the test on an error.
func (k *Kubectl) MustRun(args ...string) string {
	k.t.Helper()
	out, err := k.Run(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}
