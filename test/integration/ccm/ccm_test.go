package ccm

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// binary is the cloud-controller-manager under test, built by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ccm-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "cloud-controller-manager")
	build := exec.Command("go", "build", "-o", binary, "github.com/kcm-dev/kcm/cmd/cloud-controller-manager")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cloud-controller-manager:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	framework.Main(m)
}

// start runs the cloud-controller-manager under test with args.
func start(t *testing.T, args ...string) *framework.Process {
	t.Helper()
	return framework.StartProcess(t, binary, args...)
}

func TestLocalProviderLeaseHealthAndLoadBalancer(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	kubeconfig := framework.WriteKubeconfig(t, cfg)

	// 192.0.2.0/29 is a documentation range: addresses are only written
	// into Service status, nothing is sent to them.
	pool := netip.MustParsePrefix("192.0.2.0/29")
	cloudConfig := filepath.Join(t.TempDir(), "cloud.yaml")
	if err := os.WriteFile(cloudConfig, []byte("loadBalancerCIDRs: ["+pool.String()+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := framework.FreePort(t)
	p := start(t,
		"--cloud-provider=local",
		"--cloud-config="+cloudConfig,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--v=2",
	)

	// The Lease, under upstream's default name, held by this process
	// (its identity starts with the host name).
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, func() (bool, error) {
		lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		h := lease.Spec.HolderIdentity
		return h != nil && strings.HasPrefix(*h, host+"_"), nil
	})

	// /healthz on the secure port, anonymous as upstream allows it.
	httpClient := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // self-signed serving cert
	}
	framework.Eventually(t, 30*time.Second, func() (bool, error) {
		resp, err := httpClient.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})

	// /configz, for an authorized client (the admin's certificate,
	// authenticated and authorized through the apiserver), shows upstream's
	// configuration type.
	cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	httpClient.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}
	framework.Eventually(t, 30*time.Second, func() (bool, error) {
		resp, err := httpClient.Get(fmt.Sprintf("https://127.0.0.1:%d/configz", port))
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			// 403 for system:anonymous until the client CA from
			// kube-system/extension-apiserver-authentication is loaded.
			t.Logf("/configz: %d %s", resp.StatusCode, body)
			return false, nil
		}
		for _, want := range []string{`"cloudcontrollermanager.config.k8s.io":{`, `"kind":"CloudControllerManagerConfiguration"`, `"resourceName":"cloud-controller-manager"`, `"Name":"local"`} {
			if !strings.Contains(string(body), want) {
				return false, fmt.Errorf("/configz lacks %s: %s", want, body)
			}
		}
		return true, nil
	})

	// A LoadBalancer Service gets an address from the pool.
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ccm-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ccm-node"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), "ccm-node", metav1.DeleteOptions{}) })
	if _, err := client.CoreV1().Services(ns.Name).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.ServiceSpec{
			Type:     v1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got string
	framework.Eventually(t, 60*time.Second, func() (bool, error) {
		svc, err := client.CoreV1().Services(ns.Name).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) > 0 {
			got = ing[0].IP
			return true, nil
		}
		return false, nil
	})
	addr, err := netip.ParseAddr(got)
	if err != nil || !pool.Contains(addr) {
		t.Fatalf("Service address %q is not from the pool %s", got, pool)
	}
	// The controllers run under the CCM's own name.
	if log := p.Log(); !strings.Contains(log, "service-lb-controller") {
		t.Errorf("the log does not mention service-lb-controller")
	}
}
