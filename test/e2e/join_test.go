package e2e

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"

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
// kubeadm join reads it); the token authenticates as
// system:bootstrap:<id> in kubeadm's node group; when it expires its Secret
// is deleted and its signature disappears.
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
		Logf:              t.Logf,
	})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.WaitForControllerManagerLeader(ctx); err != nil {
		t.Fatal(err)
	}

	ca, err := os.ReadFile(c.PKI.CACert)
	if err != nil {
		t.Fatal(err)
	}
	createClusterInfo(ctx, t, c, ca)
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

	// The kubelet's bootstrap identity.
	tokenCfg := &rest.Config{
		Host:            trusted.Clusters[""].Server,
		BearerToken:     joinTokenID + "." + joinTokenSecret,
		TLSClientConfig: rest.TLSClientConfig{CAData: trusted.Clusters[""].CertificateAuthorityData},
	}
	tokenClient := kubernetes.NewForConfigOrDie(tokenCfg)
	review, err := tokenClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticating with the bootstrap token: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != bootstrapapi.BootstrapUserPrefix+joinTokenID ||
		!slices.Contains(u.Groups, "system:bootstrappers:kubeadm:default-node-token") {
		t.Errorf("bootstrap token user = %s %v", u.Username, u.Groups)
	}

	// The rest of the join (the kubelet's client CSR) goes here once the
	// CSR controllers' e2e helper exists.

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
// whole seconds), together with kubeadm's ClusterRoleBindings that let its
// group file node CSRs and have them approved. It returns the expiry as
// written.
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
			bootstrapapi.BootstrapTokenExtraGroupsKey:                 []byte("system:bootstrappers:kubeadm:default-node-token"),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, binding := range map[string]struct{ role, group string }{
		"kubeadm:kubelet-bootstrap":                     {"system:node-bootstrapper", "system:bootstrappers:kubeadm:default-node-token"},
		"kubeadm:node-autoapprove-bootstrap":            {"system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:bootstrappers:kubeadm:default-node-token"},
		"kubeadm:node-autoapprove-certificate-rotation": {"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"},
	} {
		if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: binding.role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: binding.group}},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
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
