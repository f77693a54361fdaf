package cluster

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Identities of the kubeconfigs, as kubeadm issues them.
const (
	adminUser             = "kubernetes-admin"
	adminGroup            = "system:masters"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kwokUser              = "kwok-controller"
)

// Admin client rate limits: generous, the tests and the benchmark create many
// objects through it and should not be what is slow.
const (
	adminQPS   = 200
	adminBurst = 400
)

// writeKubeconfig issues a client certificate for user/groups from the
// cluster CA and writes a kubeconfig for it at path, embedding everything.
func writeKubeconfig(path, server, clusterName string, auth *authority, user string, groups ...string) error {
	cred, err := auth.ca.clientCert(user, groups...)
	if err != nil {
		return err
	}
	contextName := user + "@" + clusterName
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			clusterName: {Server: server, CertificateAuthorityData: auth.ca.certPEM()},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			user: {ClientCertificateData: cred.certPEM(), ClientKeyData: cred.keyPEM()},
		},
		Contexts: map[string]*clientcmdapi.Context{
			contextName: {Cluster: clusterName, AuthInfo: user},
		},
		CurrentContext: contextName,
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		return fmt.Errorf("cluster: write kubeconfig %s: %w", path, err)
	}
	return nil
}

// loadRESTConfig reads a kubeconfig into a *rest.Config.
func loadRESTConfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("cluster: load kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
