package framework

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// Setup is the start of most tests: the package's control plane (started
// on first use, see StartEnv) and a namespace of the test's own, named
// from prefix. It returns the cluster-admin config and the namespace,
// with a client for that config.
func Setup(t *testing.T, prefix string) (*rest.Config, Namespace) {
	t.Helper()
	cfg := StartEnv(t)
	return cfg, CreateNamespace(t, kubernetes.NewForConfigOrDie(cfg), prefix)
}

// CreateNamespace creates a namespace named from prefix (its GenerateName).
// Namespaces are not deleted: no namespace controller runs to empty them.
func CreateNamespace(t *testing.T, client kubernetes.Interface, prefix string) Namespace {
	t.Helper()
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}
}

// NewController runs a controller's constructor on cc as kcm does, under
// name, and fails the test unless it succeeds and the controller reports
// that name. Start it, with cc's informers, with StartController.
func NewController(t testing.TB, cc *controllermanager.ControllerContext, name string, newController controllermanager.Constructor) controllermanager.Controller {
	t.Helper()
	c, err := newController(context.Background(), cc, name)
	if err != nil {
		t.Fatalf("%s: New: %v", name, err)
	}
	if c.Name() != name {
		t.Errorf("%s: Name() = %q", name, c.Name())
	}
	return c
}
