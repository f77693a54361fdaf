package kubeadm

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// Options describe the cluster.
type Options struct {
	// BinDir holds Binaries and test/node's NodeBinaries; LogDir receives
	// every node's logs and kubeadm's output (kept).
	BinDir, LogDir string
	// Patches is kubeadm's patches directory (manifests/kind-patches for
	// kcm's image); empty runs kubeadm's default images.
	Patches string
	// Workers is how many worker nodes join (at least one).
	Workers int
	Logf    func(string, ...any)
}

// Cluster is a control-plane node and its workers, made by kubeadm.
type Cluster struct {
	Options
	ControlPlane *Node
	Workers      []*Node
	token        string
	before       *Snapshot
	// Client talks to the apiserver as kubeadm's admin.
	Client     kubernetes.Interface
	RESTConfig *rest.Config
}

// Nodes is every node, the control plane first.
func (c *Cluster) Nodes() []*Node { return append([]*Node{c.ControlPlane}, c.Workers...) }

// New cleans up after an earlier run that did not, records the machine's
// state, and creates the network and the nodes (nothing runs yet).
func New(opts Options) (*Cluster, error) {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if prev, err := PreviousSnapshot(); err != nil {
		return nil, err
	} else if prev != nil {
		opts.Logf("kubeadm: cleaning up after a previous run that did not finish")
		if err := Cleanup(prev); err != nil {
			return nil, err
		}
		if err := Verify(prev); err != nil {
			return nil, err
		}
	}
	before, err := TakeSnapshot()
	if err != nil {
		return nil, err
	}
	if err := before.Save(); err != nil {
		return nil, err
	}
	c := &Cluster{Options: opts, before: before}
	mk := func(name string, host int) *Node {
		return &Node{Name: name, IP: fmt.Sprintf("%s%d", subnetPrefix, host), Dir: filepath.Join(DefaultDir, name),
			LogDir: filepath.Join(opts.LogDir, name), BinDir: opts.BinDir, Logf: opts.Logf}
	}
	c.ControlPlane = mk("kcm-control-plane", 10)
	for i := range opts.Workers {
		name := "kcm-worker"
		if i > 0 {
			name = fmt.Sprintf("kcm-worker%d", i+1) // kind's names
		}
		c.Workers = append(c.Workers, mk(name, 11+i))
	}
	if err := SetUpNetwork(); err != nil {
		return c, err
	}
	for _, n := range c.Nodes() {
		if err := n.Create(); err != nil {
			return c, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return c, nil
}

// StartRuntimes writes the images once, starts each node's containerd with
// them imported, and its kubelet watcher.
func (c *Cluster) StartRuntimes(ctx context.Context) error {
	archives, err := WriteImages(c.BinDir, filepath.Join(DefaultDir, "images"))
	if err != nil {
		return err
	}
	for _, n := range c.Nodes() {
		if err := n.StartContainerd(ctx, archives); err != nil {
			return err
		}
		n.WatchKubelet()
	}
	return os.RemoveAll(filepath.Join(DefaultDir, "images"))
}

// kubeadm runs kubeadm in n with args, its output logged to the node's
// kubeadm.log.
func (c *Cluster) kubeadm(ctx context.Context, n *Node, timeout time.Duration, args ...string) error {
	start := time.Now()
	out, err := n.Exec(ctx, timeout, filepath.Join(c.BinDir, "kubeadm"), args...)
	_ = os.WriteFile(filepath.Join(n.LogDir, "kubeadm-"+args[0]+".log"), []byte(out), 0o644)
	if err != nil {
		return err
	}
	c.Logf("kubeadm: kubeadm %s on %s succeeded in %v", args[0], n.Name, time.Since(start).Round(time.Millisecond))
	return nil
}

// Init runs `kubeadm init` on the control-plane node, with the patches
// directory when set, and builds the admin client.
func (c *Cluster) Init(ctx context.Context) error {
	var err error
	if c.token, err = bootstraputil.GenerateBootstrapToken(); err != nil {
		return err
	}
	cp := c.ControlPlane
	audit := cp.HostPath("/etc/kubernetes/audit")
	if err := os.MkdirAll(audit, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(audit, "policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	cfg := filepath.Join(cp.Dir, "kubeadm-init.yaml")
	if err := os.WriteFile(cfg, []byte(renderInit(cp, c.token, c.Patches)), 0o600); err != nil {
		return err
	}
	if err := c.kubeadm(ctx, cp, 6*time.Minute, "init", "--config="+cfg, "--v=1"); err != nil {
		return err
	}
	if c.RESTConfig, err = clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig()); err != nil {
		return err
	}
	c.RESTConfig.QPS, c.RESTConfig.Burst = 50, 100
	c.Client, err = kubernetes.NewForConfig(c.RESTConfig)
	return err
}

// AdminKubeconfig is kubeadm's admin.conf, on this machine's file system.
func (c *Cluster) AdminKubeconfig() string {
	return c.ControlPlane.HostPath("/etc/kubernetes/admin.conf")
}

// Join runs `kubeadm join` on every worker with the init's bootstrap token
// and the CA's public key hash, as `kubeadm token create --print-join-command`
// prints it.
func (c *Cluster) Join(ctx context.Context) error {
	hash, err := caCertHash(c.ControlPlane.HostPath("/etc/kubernetes/pki/ca.crt"))
	if err != nil {
		return err
	}
	for _, n := range c.Workers {
		cfg := filepath.Join(n.Dir, "kubeadm-join.yaml")
		if err := os.WriteFile(cfg, []byte(renderJoin(c.ControlPlane, n, c.token, hash)), 0o600); err != nil {
			return err
		}
		if err := c.kubeadm(ctx, n, 5*time.Minute, "join", "--config="+cfg, "--v=1"); err != nil {
			return err
		}
	}
	return nil
}

// caCertHash is kubeadm's discovery hash of a CA certificate: sha256 of
// its Subject Public Key Info.
func caCertHash(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return "", fmt.Errorf("%s: no PEM block", path)
	}
	crt, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(crt.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Teardown stops every node, keeps the apiserver's audit log in LogDir,
// cleans the machine up, then verifies it.
func (c *Cluster) Teardown() error {
	for _, n := range c.Nodes() {
		if n != nil {
			n.Stop()
		}
	}
	if c.ControlPlane != nil {
		if b, err := os.ReadFile(c.ControlPlane.HostPath("/etc/kubernetes/audit/audit.log")); err == nil {
			_ = os.WriteFile(filepath.Join(c.LogDir, "audit.log"), b, 0o644)
		}
	}
	err := Cleanup(c.before)
	return errors.Join(err, Verify(c.before))
}
