// Package clustertrustbundlepublisher tests the
// kube-apiserver-serving-clustertrustbundle-publisher-controller against a
// real kube-apiserver, with a --root-ca-file that changes on disk.
package clustertrustbundlepublisher

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kcm-dev/kcm/pkg/controller/clustertrustbundlepublisher"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func newCA(t *testing.T, host string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: host}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw})
}

func TestPublishedAndKeptInSync(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	bundles := client.CertificatesV1().ClusterTrustBundles()

	// A stale bundle of the signer, as a previous CA left it.
	ca0, ca1, ca2 := newCA(t, "ca0"), newCA(t, "ca1"), newCA(t, "ca2")
	stale := &certv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: clustertrustbundlepublisher.BundleName(clustertrustbundlepublisher.SignerName, ca0)},
		Spec:       certv1.ClusterTrustBundleSpec{SignerName: clustertrustbundlepublisher.SignerName, TrustBundle: string(ca0)},
	}
	if _, err := bundles.Create(ctx, stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := &certv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "unrelated"},
		Spec:       certv1.ClusterTrustBundleSpec{TrustBundle: string(ca0)},
	}
	if _, err := bundles.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(file, ca1, 0o600); err != nil {
		t.Fatal(err)
	}
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.SAController.RootCAFile = file
	c, err := clustertrustbundlepublisher.New(ctx, cc, names.KubeAPIServerClusterTrustBundle)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != names.KubeAPIServerClusterTrustBundle {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)

	only := func(ca []byte) {
		t.Helper()
		want := clustertrustbundlepublisher.BundleName(clustertrustbundlepublisher.SignerName, ca)
		framework.Eventually(t, timeout, func() (bool, error) {
			list, err := bundles.List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("spec.signerName", clustertrustbundlepublisher.SignerName).String(),
			})
			if err != nil {
				return false, err
			}
			return len(list.Items) == 1 && list.Items[0].Name == want && list.Items[0].Spec.TrustBundle == string(ca) &&
				len(list.Items[0].Labels) == 0, nil
		})
	}
	only(ca1)
	name1 := clustertrustbundlepublisher.BundleName(clustertrustbundlepublisher.SignerName, ca1)

	// Edited: restored.
	b, err := bundles.Get(ctx, name1, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.TrustBundle = string(ca0)
	if _, err := bundles.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	only(ca1)
	// Deleted: recreated.
	if err := bundles.Delete(ctx, name1, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	only(ca1)
	// The CA file changes: the new CA's bundle replaces the old one.
	if err := os.WriteFile(file, ca2, 0o600); err != nil {
		t.Fatal(err)
	}
	only(ca2)
	if _, err := bundles.Get(ctx, "unrelated", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Error("a bundle without the signer was deleted")
	}
}
