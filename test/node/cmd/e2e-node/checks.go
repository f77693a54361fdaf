package main

import (
	"fmt"
	"log"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/node"
	"github.com/kcm-dev/kcm/test/node/checks"
)

const (
	dnsIP = "10.96.0.10"
	ns    = "e2e-node"
)

// env is the run: the Service checks (package checks) on this control
// plane, plus what is e2e-node's own (the join, the addons, restarting the
// controller manager it runs as a process, conformance).
type env struct {
	*checks.Env
	c                *cluster.Cluster
	n                *node.Node
	o                options
	dyn              dynamic.Interface
	nodeName, server string
	tok              node.Token
}

func (e *env) all() error {
	steps := []struct {
		name string
		f    func() error
	}{
		{"bootstrap token, cluster-info and kubeadm's RBAC", e.initBootstrap},
		{"containerd up and images imported", func() error { return e.n.StartRuntime(e.Ctx) }},
		{"node joined through its bootstrap CSR", e.join},
		{"node got a podCIDR and is Ready", e.nodeReady},
		{"kube-proxy and CoreDNS Running", e.addons},
		{"HTTP Deployment behind a ClusterIP Service answers by IP and DNS name from a pod", e.Web},
		{"rollout keeps the Service answering", e.Watched("rollout", e.Rollout)},
		{"scale-down keeps the Service answering", e.Watched("scale-down", e.ScaleDown)},
		{"eviction by a NoExecute taint keeps the Service answering", e.Watched("taint eviction", e.TaintEviction)},
		{"controller manager restart (SIGTERM) keeps the Service answering", e.Watched("restart", e.restart(false))},
		{"controller manager kill -9 keeps the Service answering", e.Watched("kill -9", e.restart(true))},
		{"kubectl logs, exec and port-forward", e.KubectlChecks},
		{"the in-pod prober's record", e.ProberRecord},
	}
	for i, s := range steps {
		t := time.Now()
		log.Printf("e2e-node: [%d/%d] %s", i+1, len(steps), s.name)
		if err := s.f(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		log.Printf("e2e-node: [%d/%d] ok in %v", i+1, len(steps), time.Since(t).Round(time.Millisecond))
	}
	return nil
}

func (e *env) initBootstrap() error {
	ca, err := readFile(e.c.PKI.CACert)
	if err != nil {
		return err
	}
	e.tok, err = node.InitBootstrap(e.Ctx, e.c.Client, func(name string) error { return node.Apply(e.Ctx, e.dyn, name, e.values()) }, e.server, ca)
	return err
}

func (e *env) values() node.Values {
	return node.Values{
		ControlPlaneEndpoint: e.server, ClusterCIDR: cluster.DefaultClusterCIDR, DNSIP: dnsIP, DNSDomain: "cluster.local",
		KubeProxyImage: node.KubeProxyImage, CoreDNSImage: node.CoreDNSImage,
	}
}

// join discovers the cluster through the signed cluster-info, starts the
// kubelet with the bootstrap token, and checks that its client certificate
// came from a CSR of the token's user that the controller manager approved
// and signed.
func (e *env) join() error {
	kc, err := node.Discover(e.Ctx, e.server, e.tok, 2*time.Minute)
	if err != nil {
		return err
	}
	log.Printf("e2e-node: cluster-info verified with the bootstrap signer's signature for token %s", e.tok.ID)
	if err := e.n.StartKubelet(kc, e.tok); err != nil {
		return err
	}
	user := "system:bootstrap:" + e.tok.ID
	if err := e.Poll(2*time.Minute, "CSR of "+user+" approved and issued", func() (bool, string, error) {
		if !e.n.KubeletRunning() {
			return false, "", fmt.Errorf("the kubelet exited (see its log)")
		}
		csrs, err := e.c.Client.CertificatesV1().CertificateSigningRequests().List(e.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, csr := range csrs.Items {
			if csr.Spec.Username != user || csr.Spec.SignerName != certv1.KubeAPIServerClientKubeletSignerName {
				continue
			}
			approved := false
			for _, c := range csr.Status.Conditions {
				approved = approved || (c.Type == certv1.CertificateApproved && c.Status == corev1.ConditionTrue)
			}
			if approved && len(csr.Status.Certificate) > 0 {
				log.Printf("e2e-node: CSR %s of %s approved and issued", csr.Name, user)
				return true, "", nil
			}
			return false, fmt.Sprintf("CSR %s approved=%v issued=%v", csr.Name, approved, len(csr.Status.Certificate) > 0), nil
		}
		return false, "no CSR yet", nil
	}); err != nil {
		return err
	}
	return e.Poll(2*time.Minute, "Node "+e.nodeName+" registered", func() (bool, string, error) {
		_, err := e.c.Client.CoreV1().Nodes().Get(e.Ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

func (e *env) nodeReady() error {
	var cidr string
	if err := e.Poll(2*time.Minute, "podCIDR allocated", func() (bool, string, error) {
		n, err := e.c.Client.CoreV1().Nodes().Get(e.Ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		cidr = n.Spec.PodCIDR
		return cidr != "", "no podCIDR", nil
	}); err != nil {
		return err
	}
	log.Printf("e2e-node: podCIDR %s", cidr)
	if err := e.n.WriteCNIConfig(cidr); err != nil {
		return err
	}
	return e.Poll(2*time.Minute, "Node Ready", func() (bool, string, error) {
		n, err := e.c.Client.CoreV1().Nodes().Get(e.Ctx, e.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Reason + ": " + c.Message, nil
			}
		}
		return false, "no Ready condition", nil
	})
}

func (e *env) addons() error {
	for _, m := range []string{"kube-proxy", "coredns"} {
		if err := node.Apply(e.Ctx, e.dyn, m, e.values()); err != nil {
			return err
		}
	}
	if err := e.Poll(3*time.Minute, "DaemonSet kube-proxy ready", func() (bool, string, error) {
		ds, err := e.c.Client.AppsV1().DaemonSets("kube-system").Get(e.Ctx, "kube-proxy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := ds.Status
		return s.DesiredNumberScheduled == 1 && s.NumberReady == 1, fmt.Sprintf("%+v", s), nil
	}); err != nil {
		return err
	}
	if err := e.DeploymentReady("kube-system", "coredns", 3*time.Minute); err != nil {
		return err
	}
	return e.PodsRunning("kube-system", "k8s-app in (kube-proxy,kube-dns)", 3)
}

// restart stops the controller manager (SIGTERM, or SIGKILL), checks the
// Service answers while none runs, starts it again, waits until it leads,
// and scales web up by one (which needs its deployment and replicaset
// controllers).
func (e *env) restart(kill bool) func() error {
	return func() error {
		stop := e.c.StopControllerManager
		if kill {
			stop = e.c.KillControllerManager
		}
		if err := stop(); err != nil {
			return err
		}
		if err := e.Answers(e.WebIP(), 30*time.Second); err != nil {
			return err
		}
		if err := e.c.StartControllerManager(e.Ctx); err != nil {
			return err
		}
		t := time.Now()
		if err := e.c.WaitForControllerManagerLeader(e.Ctx); err != nil {
			return err
		}
		log.Printf("e2e-node: the new controller manager leads after %v", time.Since(t).Round(time.Millisecond))
		return e.ScaleUp()
	}
}
