// Package serviceaccounttoken tests the serviceaccount-token-controller
// against a real kube-apiserver, whose TokenReview must accept the tokens.
package serviceaccounttoken

import (
	"bytes"
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/serviceaccounttoken"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func TestLegacyTokenIsPopulatedAndAccepted(t *testing.T) {
	cfg, keyFile := startEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	cc := framework.NewControllerContext(t, cfg)
	cc.Config.SAController.ServiceAccountKeyFile = keyFile
	cc.Config.SAController.ConcurrentSATokenSyncs = 2
	c, err := serviceaccounttoken.New(ctx, cc, names.ServiceAccountToken)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Name() != names.ServiceAccountToken {
		t.Fatalf("New() = %v", c)
	}
	stop := framework.StartController(t, cc, c)

	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "satoken-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := client.CoreV1().Secrets(ns.Name)
	if _, err := secrets.Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "builder-token", Annotations: map[string]string{v1.ServiceAccountNameKey: "builder"}},
		Type:       v1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var secret *v1.Secret
	framework.Eventually(t, timeout, func() (bool, error) {
		secret, err = secrets.Get(ctx, "builder-token", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(secret.Data[v1.ServiceAccountTokenKey]) > 0, nil
	})
	if !bytes.Equal(secret.Data[v1.ServiceAccountRootCAKey], cfg.CAData) {
		t.Errorf("ca.crt = %q, want the client config's CA", secret.Data[v1.ServiceAccountRootCAKey])
	}
	if string(secret.Data[v1.ServiceAccountNamespaceKey]) != ns.Name {
		t.Errorf("namespace = %q, want %q", secret.Data[v1.ServiceAccountNamespaceKey], ns.Name)
	}
	if secret.Annotations[v1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("uid annotation = %q, want %q", secret.Annotations[v1.ServiceAccountUIDKey], sa.UID)
	}

	review, err := client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: string(secret.Data[v1.ServiceAccountTokenKey])},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !review.Status.Authenticated {
		t.Fatalf("token not authenticated: %+v", review.Status)
	}
	if want := "system:serviceaccount:" + ns.Name + ":builder"; review.Status.User.Username != want || review.Status.User.UID != string(sa.UID) {
		t.Errorf("user = %+v, want %s with UID %s", review.Status.User, want, sa.UID)
	}

	// A token Secret for a ServiceAccount that does not exist is deleted.
	if _, err := secrets.Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan-token", Annotations: map[string]string{v1.ServiceAccountNameKey: "nobody"}},
		Type:       v1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, secrets, "orphan-token")

	// Deleting the ServiceAccount deletes its tokens.
	if err := client.CoreV1().ServiceAccounts(ns.Name).Delete(ctx, "builder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, secrets, "builder-token")
	stop()
}

func waitGone(t *testing.T, secrets interface {
	Get(context.Context, string, metav1.GetOptions) (*v1.Secret, error)
}, name string) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := secrets.Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
