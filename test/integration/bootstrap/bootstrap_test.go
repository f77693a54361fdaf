// Package bootstrap tests the bootstrap-signer-controller and the
// token-cleaner-controller against a real kube-apiserver, on a fake clock
// for token expiry.
package bootstrap

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controller/bootstrap/signer"
	"github.com/kcm-dev/kcm/pkg/controller/bootstrap/tokencleaner"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout    = 30 * time.Second
	kubeconfig = "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: dGVzdA==\n    server: https://10.0.0.1:6443\n  name: \"\"\nkind: Config\n"
)

// createToken creates a bootstrap token Secret as kubeadm does; a zero
// expiration means none.
func createToken(t *testing.T, client kubernetes.Interface, id, secret string, expiration time.Time) {
	t.Helper()
	data := map[string]string{
		bootstrapapi.BootstrapTokenIDKey:               id,
		bootstrapapi.BootstrapTokenSecretKey:           secret,
		bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
		bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:kubeadm:default-node-token",
		bootstrapapi.BootstrapTokenDescriptionKey:      "integration test",
	}
	if !expiration.IsZero() {
		data[bootstrapapi.BootstrapTokenExpirationKey] = expiration.UTC().Format(time.RFC3339)
	}
	createSecret(t, client, id, data)
}

func createSecret(t *testing.T, client kubernetes.Interface, id string, data map[string]string) {
	t.Helper()
	_, err := client.CoreV1().Secrets("kube-system").Create(context.Background(), &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + id},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: data,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Secrets("kube-system").Delete(context.Background(), bootstrapapi.BootstrapTokenSecretPrefix+id, metav1.DeleteOptions{})
	})
}

func tokenExists(t *testing.T, client kubernetes.Interface, id string) bool {
	t.Helper()
	_, err := client.CoreV1().Secrets("kube-system").Get(context.Background(), bootstrapapi.BootstrapTokenSecretPrefix+id, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// start builds the named controllers on one ControllerContext with clk.
func start(t *testing.T, clk *testingclock.FakeClock, ctors map[string]controllermanager.Constructor) kubernetes.Interface {
	t.Helper()
	cfg := framework.StartEnv(t)
	cc := framework.NewControllerContext(t, cfg)
	cc.Clock = clk
	var ctrls []controllermanager.Controller
	for name, ctor := range ctors {
		c, err := ctor(context.Background(), cc, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Name() != name {
			t.Errorf("Name() = %q, want %q", c.Name(), name)
		}
		ctrls = append(ctrls, c)
	}
	framework.StartController(t, cc, multi(ctrls))
	return kubernetes.NewForConfigOrDie(cfg)
}

// multi runs several controllers as one for framework.StartController.
type multi []controllermanager.Controller

func (m multi) Name() string { return m[0].Name() }
func (m multi) Run(ctx context.Context) {
	done := make(chan struct{}, len(m))
	for _, c := range m {
		go func() {
			c.Run(ctx)
			done <- struct{}{}
		}()
	}
	for range m {
		<-done
	}
}

// clusterInfo creates kube-public/cluster-info as kubeadm does (it is
// deleted at the test's end) and returns a function reading its
// signatures.
func clusterInfo(t *testing.T, client kubernetes.Interface) func() map[string]string {
	t.Helper()
	ctx := context.Background()
	_, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: kubeconfig},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(metav1.NamespacePublic).Delete(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.DeleteOptions{})
	})
	return func() map[string]string {
		cm, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sigs := map[string]string{}
		for k, v := range cm.Data {
			if id, ok := strings.CutPrefix(k, bootstrapapi.JWSSignatureKeyPrefix); ok {
				sigs[id] = v
			}
		}
		return sigs
	}
}

// TestSignerSignsAndUnsigns: tokens sign cluster-info (verifiably, as
// kubeadm join checks), a token without the signing usage does not, a
// deleted token's signature goes, and an expiring token's signature goes
// when the fake clock reaches its expiry, with no token cleaner running.
func TestSignerSignsAndUnsigns(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	client := start(t, clk, map[string]controllermanager.Constructor{names.BootstrapSigner: signer.New})
	signatures := clusterInfo(t, client)

	expiry := clk.Now().Add(time.Hour)
	createToken(t, client, "aaaaaa", "aaaaaaaaaaaaaaaa", time.Time{})
	createToken(t, client, "bbbbbb", "bbbbbbbbbbbbbbbb", expiry)
	createSecret(t, client, "cccccc", map[string]string{
		bootstrapapi.BootstrapTokenIDKey: "cccccc", bootstrapapi.BootstrapTokenSecretKey: "cccccccccccccccc",
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
	})
	framework.Eventually(t, timeout, func() (bool, error) {
		sigs := signatures()
		return len(sigs) == 2 && sigs["aaaaaa"] != "" && sigs["bbbbbb"] != "", nil
	})
	sigs := signatures()
	for id, secret := range map[string]string{"aaaaaa": "aaaaaaaaaaaaaaaa", "bbbbbb": "bbbbbbbbbbbbbbbb"} {
		if !jws.DetachedTokenIsValid(sigs[id], kubeconfig, id, secret) {
			t.Errorf("signature of %s does not verify: %q", id, sigs[id])
		}
	}

	if err := client.CoreV1().Secrets("kube-system").Delete(context.Background(), "bootstrap-token-aaaaaa", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, ok := signatures()["aaaaaa"]
		return !ok, nil
	})
	clk.SetTime(expiry)
	framework.Eventually(t, timeout, func() (bool, error) { return len(signatures()) == 0, nil })
	if !tokenExists(t, client, "bbbbbb") {
		t.Error("the signer deleted an expired token")
	}
}

// TestTokenCleaner: on the fake clock, an expired token goes at once, one
// with a malformed expiration too (upstream treats it as expired), one
// expiring later stays until the clock reaches its expiry and then goes,
// and its signature with it; a token without expiration stays.
func TestTokenCleaner(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	client := start(t, clk, map[string]controllermanager.Constructor{
		names.TokenCleaner:    tokencleaner.New,
		names.BootstrapSigner: signer.New,
	})
	signatures := clusterInfo(t, client)
	later := clk.Now().Add(2 * time.Hour)
	createToken(t, client, "expird", "eeeeeeeeeeeeeeee", clk.Now().Add(-time.Minute))
	createSecret(t, client, "badexp", map[string]string{
		bootstrapapi.BootstrapTokenIDKey: "badexp", bootstrapapi.BootstrapTokenSecretKey: "bbbbbbbbbbbbbbbb",
		bootstrapapi.BootstrapTokenUsageSigningKey: "true", bootstrapapi.BootstrapTokenExpirationKey: "next tuesday",
	})
	createToken(t, client, "later1", "llllllllllllllll", later)
	createToken(t, client, "foreva", "ffffffffffffffff", time.Time{})

	framework.Eventually(t, timeout, func() (bool, error) {
		return !tokenExists(t, client, "expird") && !tokenExists(t, client, "badexp"), nil
	})
	framework.Eventually(t, timeout, func() (bool, error) {
		sigs := signatures()
		return len(sigs) == 2 && sigs["later1"] != "" && sigs["foreva"] != "", nil
	})
	clk.SetTime(later.Add(-time.Second))
	framework.Consistently(t, time.Second, "later1 kept before its expiry", func() bool { return tokenExists(t, client, "later1") })
	clk.SetTime(later)
	framework.Eventually(t, timeout, func() (bool, error) { return !tokenExists(t, client, "later1"), nil })
	framework.Eventually(t, timeout, func() (bool, error) {
		sigs := signatures()
		return len(sigs) == 1 && sigs["foreva"] != "", nil
	})
	if !tokenExists(t, client, "foreva") {
		t.Error("a token without expiration was deleted")
	}
}
