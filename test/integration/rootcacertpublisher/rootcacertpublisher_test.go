// Package rootcacertpublisher tests the
// root-ca-certificate-publisher-controller against a real kube-apiserver.
package rootcacertpublisher

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kcm-dev/kcm/pkg/controller/rootcacertpublisher"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// start runs the controller built by its real constructor from cc.
func start(t *testing.T, cc *controllermanager.ControllerContext) func() {
	t.Helper()
	c, err := rootcacertpublisher.New(context.Background(), cc, names.RootCACertificatePublisher)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.RootCACertificatePublisher {
		t.Errorf("Name() = %q, want %q", c.Name(), names.RootCACertificatePublisher)
	}
	return framework.StartController(t, cc, c)
}

func createNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rootca-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// waitForPublished waits until ns holds the ConfigMap exactly as the
// controller writes it, and returns it.
func waitForPublished(t *testing.T, client kubernetes.Interface, ns string, ca []byte) *v1.ConfigMap {
	t.Helper()
	want := map[string]string{rootcacertpublisher.DataKey: string(ca)}
	var cm *v1.ConfigMap
	framework.Eventually(t, timeout, func() (bool, error) {
		var err error
		cm, err = client.CoreV1().ConfigMaps(ns).Get(context.Background(), rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return maps.Equal(cm.Data, want) &&
			cm.Annotations[rootcacertpublisher.DescriptionAnnotation] == rootcacertpublisher.Description, nil
	})
	return cm
}

func TestPublishAndRestore(t *testing.T) {
	cfg := framework.StartEnv(t)
	if len(cfg.CAData) == 0 {
		t.Fatal("envtest config has no CA data")
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	existing := createNamespace(t, client)

	// Without --root-ca-file the bundle is the client config's CA data.
	stop := start(t, framework.NewControllerContext(t, cfg))

	cm := waitForPublished(t, client, existing, cfg.CAData)
	// Also in namespaces that predate the controller, such as kube-system.
	waitForPublished(t, client, metav1.NamespaceSystem, cfg.CAData)

	cm.Data[rootcacertpublisher.DataKey] = "edited"
	if _, err := client.CoreV1().ConfigMaps(existing).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished(t, client, existing, cfg.CAData)

	cm = waitForPublished(t, client, existing, cfg.CAData)
	delete(cm.Annotations, rootcacertpublisher.DescriptionAnnotation)
	if _, err := client.CoreV1().ConfigMaps(existing).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished(t, client, existing, cfg.CAData)

	if err := client.CoreV1().ConfigMaps(existing).Delete(ctx, rootcacertpublisher.ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPublished(t, client, existing, cfg.CAData)

	waitForPublished(t, client, createNamespace(t, client), cfg.CAData)
	stop()
}

func TestRootCAFile(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ca, _, err := certutil.GenerateSelfSignedCertKey("root-ca.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "ca.crt")
	bad := filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(good, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}

	cc := framework.NewControllerContext(t, cfg)
	cc.Config.SAController.RootCAFile = bad
	if _, err := rootcacertpublisher.New(context.Background(), cc, names.RootCACertificatePublisher); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("New with an invalid --root-ca-file: error = %v, want one naming %s", err, bad)
	}

	// A namespace of this test only: other tests' controllers are stopped,
	// but the shared cluster still holds the ConfigMaps they wrote.
	cc = framework.NewControllerContext(t, cfg)
	cc.Config.SAController.RootCAFile = good
	ns := createNamespace(t, client)
	stop := start(t, cc)
	waitForPublished(t, client, ns, ca)
	stop()
}
