package node

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// Token is a bootstrap token, id.secret.
type Token struct{ ID, Secret string }

func (t Token) String() string { return t.ID + "." + t.Secret }

// nodeTokenGroup is the group kubeadm's default node token authenticates
// in, which its RBAC bindings name.
const nodeTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

// InitBootstrap does what `kubeadm init` does for nodes to join: a new
// bootstrap token (authentication and signing, kubeadm's extra group, 24h),
// the unsigned cluster-info ConfigMap in kube-public (kcm's bootstrapsigner
// signs it with the token), and kubeadm's RBAC for both (manifests
// bootstrap.yaml).
func InitBootstrap(ctx context.Context, client kubernetes.Interface, apply func(name string) error, server string, caPEM []byte) (Token, error) {
	s, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return Token{}, err
	}
	id, secret, _ := strings.Cut(s, ".")
	tok := Token{ID: id, Secret: secret}
	if err := apply("bootstrap"); err != nil {
		return tok, err
	}
	_, err = client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenExpirationKey:       time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      nodeTokenGroup,
			"description": "kcm e2e-node join token",
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return tok, fmt.Errorf("node: bootstrap token: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return tok, err
	}
	_, err = client.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(raw)},
	}, metav1.CreateOptions{})
	if err != nil {
		return tok, fmt.Errorf("node: cluster-info: %w", err)
	}
	return tok, nil
}

// Discover is `kubeadm join`'s token discovery: it reads cluster-info as
// system:anonymous from server, without trusting its certificate yet, until
// the bootstrap signer has added the token's signature, checks the
// signature, and returns the cluster's kubeconfig (server and CA) from it.
func Discover(ctx context.Context, server string, tok Token, timeout time.Duration) (*clientcmdapi.Config, error) {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := server + "/api/v1/namespaces/kube-public/configmaps/" + bootstrapapi.ConfigMapClusterInfo
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for {
		if kc, err := discoverOnce(ctx, hc, url, tok); err == nil {
			return kc, nil
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("node: cluster-info not signed for token %s within %v: %s", tok.ID, timeout, last)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func discoverOnce(ctx context.Context, hc *http.Client, url string, tok Token) (*clientcmdapi.Config, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET cluster-info: %s: %s", res.Status, body)
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(body, &cm); err != nil {
		return nil, err
	}
	content := cm.Data[bootstrapapi.KubeConfigKey]
	sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+tok.ID]
	if !ok {
		return nil, fmt.Errorf("cluster-info has no signature for token %s yet", tok.ID)
	}
	if !jws.DetachedTokenIsValid(sig, content, tok.ID, tok.Secret) {
		return nil, fmt.Errorf("cluster-info's signature for token %s does not verify", tok.ID)
	}
	return clientcmd.Load([]byte(content))
}

// writeBootstrapKubeconfig is kubeadm join's bootstrap-kubelet.conf: the
// discovered cluster, the token as the credential.
func writeBootstrapKubeconfig(path string, cluster *clientcmdapi.Config, tok Token) error {
	var c *clientcmdapi.Cluster
	for _, v := range cluster.Clusters {
		c = v
	}
	if c == nil {
		return fmt.Errorf("node: cluster-info holds no cluster")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubernetes"] = c
	kc.AuthInfos["tls-bootstrap-token-user"] = &clientcmdapi.AuthInfo{Token: tok.String()}
	kc.Contexts["tls-bootstrap-token-user@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "tls-bootstrap-token-user"}
	kc.CurrentContext = "tls-bootstrap-token-user@kubernetes"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o600)
}
