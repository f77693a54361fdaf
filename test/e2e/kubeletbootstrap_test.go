package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
)

// signedWithin is how fast the issue asks a kubelet client request to be
// approved and signed.
const signedWithin = 5 * time.Second

// TestKubeletTLSBootstrap is a kubelet's TLS bootstrap against kubeadm's
// command line, with each binary: a bootstrap token in kubeadm's node group
// files a client request that the controller manager approves and signs
// within 5 s; the certificate authenticates as system:node:<name> in
// system:nodes; a renewal filed with it is approved too (as selfnodeclient);
// a serving request is signed once approved by hand.
func TestKubeletTLSBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane")
	}
	for _, bin := range []string{cluster.OurControllerManager, cluster.UpstreamControllerManager} {
		t.Run(bin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, err := cluster.Start(ctx, cluster.Options{
				WorkDir:           t.TempDir(),
				ControllerManager: cluster.ControllerManagerOptions{Binary: bin},
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
			start := time.Now()
			if err := WaitForCSRSigning(ctx, c.Client, time.Minute); err != nil {
				t.Fatal(err)
			}
			t.Logf("the controller manager signs requests %v after taking the lease", time.Since(start).Round(time.Millisecond))
			checkKubeletTLSBootstrap(ctx, t, c, "e2e-node")
		})
	}
}

// checkKubeletTLSBootstrap runs the bootstrap on a running cluster, for
// other end-to-end tests too (a join with a real kubeadm token).
func checkKubeletTLSBootstrap(ctx context.Context, t *testing.T, c *cluster.Cluster, node string) {
	t.Helper()
	if err := KubeadmNodeBootstrapRBAC(ctx, c.Client); err != nil {
		t.Fatal(err)
	}
	token, err := CreateNodeBootstrapToken(ctx, c.Client, "e2e0ab", "0123456789abcdef", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := TokenConfig(c.RESTConfig, token)
	if who, err := WhoAmI(ctx, bootstrap); err != nil || who.Username != "system:bootstrap:e2e0ab" || !slices.Contains(who.Groups, KubeadmNodeTokenGroup) {
		t.Fatalf("the bootstrap token authenticates as %+v (%v)", who, err)
	}

	start := time.Now()
	first, err := RequestKubeletClientCertificate(ctx, bootstrap, node, signedWithin)
	if err != nil {
		t.Fatalf("bootstrap client certificate: %v", err)
	}
	t.Logf("bootstrap request %s approved and signed in %v", first.CSRName, time.Since(start).Round(time.Millisecond))
	expectApproval(ctx, t, c, first.CSRName, NodeClientApprovalMessage)

	nodeCfg := CertConfig(c.RESTConfig, first.CertPEM, first.KeyPEM)
	who, err := WhoAmI(ctx, nodeCfg)
	if err != nil || who.Username != "system:node:"+node || !slices.Contains(who.Groups, "system:nodes") {
		t.Fatalf("the issued certificate authenticates as %+v (%v), want system:node:%s in system:nodes", who, err, node)
	}

	renewed, err := RequestKubeletClientCertificate(ctx, nodeCfg, node, signedWithin)
	if err != nil {
		t.Fatalf("renewal: %v", err)
	}
	expectApproval(ctx, t, c, renewed.CSRName, SelfNodeClientApprovalMessage)
	if who, err := WhoAmI(ctx, CertConfig(c.RESTConfig, renewed.CertPEM, renewed.KeyPEM)); err != nil || who.Username != "system:node:"+node {
		t.Fatalf("the renewed certificate authenticates as %+v (%v)", who, err)
	}

	serving, err := FileKubeletServingRequest(ctx, nodeCfg, node, []string{node}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatalf("serving request: %v", err)
	}
	if cond, err := ApprovalOf(ctx, c.Client, serving.Name); err != nil || cond != nil {
		t.Fatalf("the serving request is approved without anyone approving it: %+v (%v)", cond, err)
	}
	if err := ApproveCSR(ctx, c.Client, serving.Name); err != nil {
		t.Fatal(err)
	}
	cert, err := serving.Wait(ctx, signedWithin)
	if err != nil {
		t.Fatalf("serving certificate: %v", err)
	}
	block, _ := pem.Decode(cert.CertPEM)
	if block == nil {
		t.Fatal("the serving certificate is not PEM")
	}
	parsed, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parsed.DNSNames, []string{node}) || !slices.Equal(parsed.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("serving certificate: DNS %v, usages %v", parsed.DNSNames, parsed.ExtKeyUsage)
	}
}

func expectApproval(ctx context.Context, t *testing.T, c *cluster.Cluster, name, message string) {
	t.Helper()
	cond, err := ApprovalOf(ctx, c.Client, name)
	if err != nil {
		t.Fatal(err)
	}
	if cond == nil || cond.Reason != "AutoApproved" || cond.Message != message {
		t.Errorf("CSR %s: approval %+v, want AutoApproved %q", name, cond, message)
	}
}
