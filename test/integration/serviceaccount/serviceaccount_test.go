// Package serviceaccount tests the serviceaccount-controller against a real
// kube-apiserver.
package serviceaccount

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/serviceaccount"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// setup starts the controller through its real constructor and returns an
// admin client and the function stopping the controller.
func setup(t *testing.T) (kubernetes.Interface, func()) {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := framework.NewControllerContext(t, cfg)
	c, err := serviceaccount.New(context.Background(), cc, names.ServiceAccount)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.ServiceAccount {
		t.Errorf("Name() = %q, want %q", c.Name(), names.ServiceAccount)
	}
	return client, framework.StartController(t, cc, c)
}

func createNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sa-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// waitForDefault waits for the default ServiceAccount of ns and returns its UID.
func waitForDefault(t *testing.T, client kubernetes.Interface, ns string) string {
	t.Helper()
	var uid string
	framework.Eventually(t, timeout, func() (bool, error) {
		sa, err := client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		uid = string(sa.UID)
		return true, nil
	})
	return uid
}

func TestDefaultServiceAccountCreatedAndRecreated(t *testing.T) {
	client, stop := setup(t)
	ctx := context.Background()

	ns := createNamespace(t, client)
	uid := waitForDefault(t, client, ns)

	if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		sa, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && string(sa.UID) != uid, err
	})

	stop()
}

func TestTerminatingNamespaceGetsNone(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	// Without a namespace controller the namespace stays Terminating, held
	// by the kubernetes finalizer.
	terminating := createNamespace(t, client)
	if err := client.CoreV1().Namespaces().Delete(ctx, terminating, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		ns, err := client.CoreV1().Namespaces().Get(ctx, terminating, metav1.GetOptions{})
		return err == nil && ns.Status.Phase == v1.NamespaceTerminating, err
	})

	_, stop := setup(t)
	// The controller's single worker handles namespaces in queue order: once
	// a namespace created after it has its ServiceAccount, the terminating
	// one has been handled too.
	waitForDefault(t, client, createNamespace(t, client))
	if _, err := client.CoreV1().ServiceAccounts(terminating).Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("terminating namespace %s: got err %v, want NotFound", terminating, err)
	}
	stop()
}
