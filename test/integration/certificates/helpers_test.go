package certificates

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// as returns a client impersonating user in groups.
func as(t *testing.T, cfg *rest.Config, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return kubernetes.NewForConfigOrDie(c)
}

// bind grants a ClusterRole to a group, as kubeadm's bootstrap bindings do;
// the binding is removed at cleanup.
func bind(t *testing.T, client kubernetes.Interface, name, role, group string) {
	t.Helper()
	ctx := context.Background()
	_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// create files a request with client, named name.
func create(t *testing.T, client kubernetes.Interface, name, signer string, req csrtest.Request, usages []certv1.KeyUsage, opts ...csrtest.Option) *certv1.CertificateSigningRequest {
	t.Helper()
	p, _ := req.PEM(t)
	csr := csrtest.CSR(name, signer, p, append([]csrtest.Option{csrtest.WithUsages(usages...)}, opts...)...)
	got, err := client.CertificatesV1().CertificateSigningRequests().Create(context.Background(), csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CSR %s: %v", name, err)
	}
	return got
}

// decide approves or denies the request by hand, as kubectl certificate does.
func decide(t *testing.T, client kubernetes.Interface, name string, t2 certv1.RequestConditionType) {
	t.Helper()
	ctx := context.Background()
	csr, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: t2, Status: corev1.ConditionTrue, Reason: "KubectlApprove", Message: "by the test",
	})
	if _, err := client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls the request until cond holds and returns it.
func waitFor(t *testing.T, client kubernetes.Interface, name string, cond func(*certv1.CertificateSigningRequest) bool) *certv1.CertificateSigningRequest {
	t.Helper()
	return framework.WaitFor(t, timeout, client.CertificatesV1().CertificateSigningRequests(), name, "CSR "+name, cond)
}

func issued(csr *certv1.CertificateSigningRequest) bool { return len(csr.Status.Certificate) > 0 }

// waitForCertificate waits for the certificate and parses it.
func waitForCertificate(t *testing.T, client kubernetes.Interface, name string) *x509.Certificate {
	t.Helper()
	return csrtest.ParseCertificate(t, waitFor(t, client, name, issued).Status.Certificate)
}

// condition returns the request's condition of type ct, if any.
func condition(csr *certv1.CertificateSigningRequest, ct certv1.RequestConditionType) (certv1.CertificateSigningRequestCondition, bool) {
	for _, c := range csr.Status.Conditions {
		if c.Type == ct {
			return c, true
		}
	}
	return certv1.CertificateSigningRequestCondition{}, false
}

// deleteAtCleanup removes the named requests when the test ends.
func deleteAtCleanup(t *testing.T, client kubernetes.Interface, names ...string) {
	t.Cleanup(func() {
		for _, n := range names {
			err := client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), n, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting CSR %s: %v", n, err)
			}
		}
	})
}
