package kcm

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// unimplementedController returns the first (by name) controller that is
// on by default without feature gates and that kcm does not implement yet,
// "" once there is none.
func unimplementedController() string {
	var names []string
	for name, d := range app.NewRegistry() {
		if !d.Implemented() && !d.DisabledByDefault && len(d.RequiredFeatureGates) == 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func createNamespace(t *testing.T) string {
	t.Helper()
	ns, err := adminClient(t).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kcm-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func waitDefaultServiceAccount(t *testing.T, ns string, timeout time.Duration) {
	t.Helper()
	framework.Poll(t, timeout, "ServiceAccount "+ns+"/default", func(ctx context.Context) (bool, error) {
		_, err := adminClient(t).CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
}

func waitRootCA(t *testing.T, ns string, want string, timeout time.Duration) {
	t.Helper()
	framework.Poll(t, timeout, "ConfigMap "+ns+"/kube-root-ca.crt", func(ctx context.Context) (bool, error) {
		cm, err := adminClient(t).CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil && cm.Data["ca.crt"] == want, ignoreNotFound(err)
	})
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TestControllersThroughTheBinary runs the two implemented controllers in
// the binary, with the process's own credentials and with a ServiceAccount
// per controller (kubeadm's --use-service-account-credentials).
func TestControllersThroughTheBinary(t *testing.T) {
	caFile := env.ControlPlane.APIServer.SecureServing.CA
	ca := string(caFile)
	dir := t.TempDir()
	rootCA := dir + "/ca.crt"
	if err := os.WriteFile(rootCA, caFile, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"own credentials", nil},
		{"service account credentials", []string{"--use-service-account-credentials=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, append([]string{"--leader-elect-resource-name=controllers-" + tc.name[:3], "--root-ca-file=" + rootCA,
				"--controllers=*,bootstrapsigner,tokencleaner"}, tc.args...)...)
			framework.Poll(t, 30*time.Second, "controllers to start", func(context.Context) (bool, error) {
				return strings.Contains(p.Log(), "Controller starting"), nil
			})
			c := adminClient(t)
			ctx := context.Background()
			ns := createNamespace(t)
			waitDefaultServiceAccount(t, ns, 2*time.Second)
			waitRootCA(t, ns, ca, 2*time.Second)

			// Deleted objects come back; an edited ConfigMap is restored.
			if err := c.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitDefaultServiceAccount(t, ns, 5*time.Second)
			cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["ca.crt"] = "tampered"
			if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitRootCA(t, ns, ca, 5*time.Second)
			if err := c.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitRootCA(t, ns, ca, 5*time.Second)

			// Unimplemented controllers are named once at startup.
			if name := unimplementedController(); name != "" && (!strings.Contains(p.Log(), "does not implement yet") || !strings.Contains(p.Log(), name)) {
				t.Errorf("the log does not name the enabled controllers kcm does not implement")
			}
			if len(tc.args) > 0 {
				// Each controller acts as its own ServiceAccount.
				for _, sa := range []string{"service-account-controller", "root-ca-cert-publisher"} {
					if _, err := c.CoreV1().ServiceAccounts("kube-system").Get(ctx, sa, metav1.GetOptions{}); err != nil {
						t.Errorf("ServiceAccount kube-system/%s: %v", sa, err)
					}
				}
			}
		})
	}
}
