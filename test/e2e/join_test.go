package e2e

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"

	"github.com/kcm-dev/kcm/pkg/controller/clustertrustbundlepublisher"
	"github.com/kcm-dev/kcm/test/cluster"
)

// joinToken is a bootstrap token as `kubeadm token create` makes it.
const (
	joinTokenID     = "abcdef"
	joinTokenSecret = "0123456789abcdef"
	// joinTokenTTL is short so the test sees the token expire; long enough
	// for the steps that use it.
	joinTokenTTL = 30 * time.Second
)

// TestJoin is the node-join path of issue #17 with kubeadm's command line
// (--controllers=*,bootstrapsigner,tokencleaner), with our binary and with
// upstream's: a bootstrap token created as kubeadm creates it signs
// cluster-info (verified as kubeadm join verifies it, read anonymously as
// kubeadm join reads it), and the kube-apiserver serving CA is published as
// upstream's ClusterTrustBundle; with only that token and the CA cluster-info
// gives, the kubelet's client request is approved and signed within 5 s
// and its certificate authenticates as system:node:<name> in system:nodes,
// and a renewal filed with it is approved too (the CSR controllers'
// helpers, kubeletbootstrap.go); when the token expires its Secret is
// deleted, its signature disappears and it no longer authenticates.
//
// KCM_E2E_JOIN=kcm or =upstream runs one binary only.
func TestJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane")
	}
	for _, tc := range []struct{ name, binary string }{
		{"kcm", cluster.OurControllerManager},
		{"upstream", cluster.UpstreamControllerManager},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if only := os.Getenv("KCM_E2E_JOIN"); only != "" && only != tc.name {
				t.Skipf("KCM_E2E_JOIN=%s", only)
			}
			testJoin(t, tc.binary)
		})
	}
}

func testJoin(t *testing.T, binary string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           t.TempDir(),
		ControllerManager: cluster.ControllerManagerOptions{Binary: binary},
		SkipKwok:          true,
		SkipScheduler:     true,
		Logf:              t.Logf,
	})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.WaitForControllerManagerLeader(ctx); err != nil {
		t.Fatal(err)
	}
	// The token's short life starts once the controllers run.
	if err := WaitForCSRSigning(ctx, c.Client, time.Minute); err != nil {
		t.Fatal(err)
	}

	ca, err := os.ReadFile(c.PKI.CACert)
	if err != nil {
		t.Fatal(err)
	}
	checkServingTrustBundle(ctx, t, c, ca)
	createClusterInfo(ctx, t, c, ca)
	if err := KubeadmNodeBootstrapRBAC(ctx, c.Client); err != nil {
		t.Fatal(err)
	}
	expires := createJoinToken(ctx, t, c.Client, time.Now().Add(joinTokenTTL))

	// kubeadm join: cluster-info, read anonymously, carries a signature
	// the token verifies; its kubeconfig gives the CA to trust from then on.
	var kubeconfig string
	poll(ctx, t, 10*time.Second, "cluster-info signed for the token", func() bool {
		cm, err := anonymousClient(t, c).CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			t.Logf("anonymous GET cluster-info: %v", err)
			return false
		}
		sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+joinTokenID]
		if !ok {
			return false
		}
		kubeconfig = cm.Data[bootstrapapi.KubeConfigKey]
		if !jws.DetachedTokenIsValid(sig, kubeconfig, joinTokenID, joinTokenSecret) {
			t.Fatalf("the signature of cluster-info does not verify with the token: %q", sig)
		}
		return true
	})
	trusted, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil || trusted.Clusters[""] == nil {
		t.Fatalf("cluster-info's kubeconfig: %v", err)
	}

	// The kubelet's bootstrap identity: the token, and the CA cluster-info
	// gave.
	tokenCfg := TokenConfig(&rest.Config{
		Host:            trusted.Clusters[""].Server,
		TLSClientConfig: rest.TLSClientConfig{CAData: trusted.Clusters[""].CertificateAuthorityData},
	}, joinTokenID+"."+joinTokenSecret)
	if who, err := WhoAmI(ctx, tokenCfg); err != nil || who.Username != bootstrapapi.BootstrapUserPrefix+joinTokenID ||
		!slices.Contains(who.Groups, KubeadmNodeTokenGroup) {
		t.Fatalf("the bootstrap token authenticates as %+v (%v)", who, err)
	}

	// TLS bootstrap: the client request is approved and signed, the
	// certificate is the node's, and its renewal is approved too.
	const node = "e2e-join-node"
	first, err := RequestKubeletClientCertificate(ctx, tokenCfg, node, signedWithin)
	if err != nil {
		t.Fatalf("bootstrap client certificate: %v", err)
	}
	expectApproval(ctx, t, c, first.CSRName, NodeClientApprovalMessage)
	nodeCfg := CertConfig(tokenCfg, first.CertPEM, first.KeyPEM)
	if who, err := WhoAmI(ctx, nodeCfg); err != nil || who.Username != "system:node:"+node || !slices.Contains(who.Groups, "system:nodes") {
		t.Fatalf("the issued certificate authenticates as %+v (%v), want system:node:%s in system:nodes", who, err, node)
	}
	renewed, err := RequestKubeletClientCertificate(ctx, nodeCfg, node, signedWithin)
	if err != nil {
		t.Fatalf("renewal: %v", err)
	}
	expectApproval(ctx, t, c, renewed.CSRName, SelfNodeClientApprovalMessage)

	// The token expires: the token cleaner deletes its Secret and the
	// signature goes.
	poll(ctx, t, time.Until(expires)+15*time.Second, "the expired token's Secret deleted and its signature removed", func() bool {
		_, err := c.Client.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, bootstrapapi.BootstrapTokenSecretPrefix+joinTokenID, metav1.GetOptions{})
		if err == nil || !apierrors.IsNotFound(err) {
			return false
		}
		cm, err := c.Client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			return false
		}
		_, signed := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+joinTokenID]
		return !signed
	})
	if time.Now().Before(expires) {
		t.Errorf("the token's Secret was deleted before its expiry %s", expires)
	}
	if who, err := WhoAmI(ctx, tokenCfg); !apierrors.IsUnauthorized(err) {
		t.Errorf("the expired token still authenticates: %+v (%v)", who, err)
	}
}

// checkServingTrustBundle waits for the kube-apiserver serving CA (kubeadm
// passes the cluster CA as --root-ca-file) to be published as the only
// ClusterTrustBundle of kubernetes.io/kube-apiserver-serving, with
// upstream's name, and nothing else on it.
func checkServingTrustBundle(ctx context.Context, t *testing.T, c *cluster.Cluster, ca []byte) {
	t.Helper()
	want := clustertrustbundlepublisher.BundleName(clustertrustbundlepublisher.SignerName, ca)
	var got []certv1.ClusterTrustBundle
	poll(ctx, t, 30*time.Second, "the kube-apiserver serving ClusterTrustBundle "+want, func() bool {
		list, err := c.Client.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.signerName", clustertrustbundlepublisher.SignerName).String(),
		})
		if err != nil {
			return false
		}
		got = list.Items
		return len(got) == 1 && got[0].Name == want
	})
	b := got[0]
	if b.Spec.TrustBundle != string(ca) || len(b.Labels) != 0 || len(b.Annotations) != 0 || len(b.OwnerReferences) != 0 {
		t.Errorf("ClusterTrustBundle %s: labels %v, annotations %v, owners %v, trust bundle is the CA: %v",
			b.Name, b.Labels, b.Annotations, b.OwnerReferences, b.Spec.TrustBundle == string(ca))
	}
}

// createClusterInfo creates kube-public/cluster-info as `kubeadm init`
// does: the admin kubeconfig's cluster (server and CA) under the key
// kubeconfig, and a Role and RoleBinding letting system:anonymous read it.
func createClusterInfo(ctx context.Context, t *testing.T, c *cluster.Cluster, ca []byte) {
	t.Helper()
	kubeconfig, err := clientcmd.Write(clientcmdapi.Config{Clusters: map[string]*clientcmdapi.Cluster{
		"": {Server: c.APIServerURL, CertificateAuthorityData: ca},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const rbacName = "kubeadm:bootstrap-signer-clusterinfo"
	if _, err := c.Client.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(kubeconfig)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles(metav1.NamespacePublic).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: rbacName},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{bootstrapapi.ConfigMapClusterInfo}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(metav1.NamespacePublic).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: rbacName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: rbacName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "system:anonymous"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createJoinToken creates the bootstrap token Secret as `kubeadm token
// create` does (default usages and group), expiring at expires (RFC 3339,
// whole seconds). It returns the expiry as written.
func createJoinToken(ctx context.Context, t *testing.T, client kubernetes.Interface, expires time.Time) time.Time {
	t.Helper()
	expiration := expires.UTC().Format(time.RFC3339)
	if _, err := client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + joinTokenID},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:                          []byte(joinTokenID),
			bootstrapapi.BootstrapTokenSecretKey:                      []byte(joinTokenSecret),
			bootstrapapi.BootstrapTokenDescriptionKey:                 []byte("e2e join token"),
			bootstrapapi.BootstrapTokenExpirationKey:                  []byte(expiration),
			bootstrapapi.BootstrapTokenUsagePrefix + "authentication": []byte("true"),
			bootstrapapi.BootstrapTokenUsagePrefix + "signing":        []byte("true"),
			bootstrapapi.BootstrapTokenExtraGroupsKey:                 []byte(KubeadmNodeTokenGroup),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, expiration)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// anonymousClient talks to the apiserver without credentials and without
// trusting its certificate, as kubeadm join does before it has verified
// cluster-info.
func anonymousClient(t *testing.T, c *cluster.Cluster) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: c.APIServerURL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
}
