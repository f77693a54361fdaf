package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// DefaultDir is where the node keeps its state (containerd's, the
// kubelet's); logs go to Config.LogDir.
const DefaultDir = "/var/lib/kcm-e2e-node"

// Config describes the node.
type Config struct {
	// Dir holds containerd's and the kubelet's state; removed by Cleanup.
	Dir string
	// LogDir receives containerd.log and kubelet.log; kept.
	LogDir string
	// BinDir holds NodeBinaries.
	BinDir string
	// Name is the node's name (this machine's hostname).
	Name string
	// IP is the node's InternalIP (the kubelet's --node-ip), which New puts
	// on a link of its own, LinkName; empty means DefaultIP.
	IP string
	// CACertFile is the cluster CA the kubelet trusts clients of.
	CACertFile string
	// ClusterDNS and ClusterDomain go to the kubelet's configuration.
	ClusterDNS, ClusterDomain string
	// Containerd is the containerd binary; empty means Debian's in PATH
	// (1.6, which has no CDI). It runs the runc shim built beside it
	// (PATH may hold an older one).
	Containerd string
	Logf       func(string, ...any)
}

// Node is a real node on this machine: containerd and a kubelet.
type Node struct {
	Config
	containerd, kubelet *proc
	before              *snapshot
}

// sysctls the node, the kubelet and kube-proxy set, restored by Cleanup.
var sysctls = []string{
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes", "net/netfilter/nf_conntrack_max",
}

// New records the machine's state (for Cleanup and Verify), prepares the
// node's directories and creates LinkName with the node's address. Nothing
// runs yet.
func New(cfg Config) (*Node, error) {
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if cfg.IP == "" {
		cfg.IP = DefaultIP
	}
	n := &Node{Config: cfg}
	if err := n.cleanupPrevious(); err != nil {
		return nil, err
	}
	if linkExists(LinkName) {
		return nil, fmt.Errorf("node: link %s exists but is no run's (no %s): remove it by hand (ip link delete %s)", LinkName, n.snapshotPath(), LinkName)
	}
	var err error
	if n.before, err = takeSnapshot(n); err != nil {
		return nil, err
	}
	if err := n.saveSnapshot(); err != nil {
		return nil, err
	}
	for _, d := range []string{cfg.Dir, cfg.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	kind, err := addLink(n.IP)
	if err != nil {
		return nil, errors.Join(err, n.Cleanup())
	}
	n.logf("node: address %s on %s (%s link)", n.IP, LinkName, kind)
	return n, nil
}

// snapshotPath is where the state before the run is kept until Cleanup.
func (n *Node) snapshotPath() string { return filepath.Clean(n.Dir) + ".before.json" }

func (n *Node) saveSnapshot() error {
	b, err := json.Marshal(n.before)
	if err != nil {
		return err
	}
	return os.WriteFile(n.snapshotPath(), b, 0o600)
}

// cleanupPrevious cleans up after a run that was killed before its own
// Cleanup, from the state that run saved.
func (n *Node) cleanupPrevious() error {
	b, err := os.ReadFile(n.snapshotPath())
	if os.IsNotExist(err) {
		if _, err := os.Stat(n.Dir); err == nil {
			return fmt.Errorf("node: %s exists but no %s: remove it by hand once nothing is mounted below it", n.Dir, n.snapshotPath())
		}
		return nil
	}
	if err != nil {
		return err
	}
	n.before = &snapshot{}
	if err := json.Unmarshal(b, n.before); err != nil {
		return fmt.Errorf("node: %s: %w", n.snapshotPath(), err)
	}
	n.logf("node: cleaning up after a previous run that did not finish")
	if err := n.Cleanup(); err != nil {
		return err
	}
	return n.Verify()
}

func (n *Node) logf(format string, args ...any) { n.Logf(format, args...) }

func (n *Node) cniConfDir() string { return filepath.Join(n.Dir, "cni", "net.d") }

// StartRuntime sets the host up for pods (forwarding, /lib/modules for
// kube-proxy's mount), starts containerd and imports the images.
func (n *Node) StartRuntime(ctx context.Context) error {
	if err := writeSysctl("net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	if err := os.MkdirAll("/lib/modules", 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(n.cniConfDir(), 0o755); err != nil {
		return err
	}
	start := time.Now()
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.importImages(); err != nil {
		return err
	}
	n.logf("node: containerd up, images imported (%v)", time.Since(start).Round(time.Millisecond))
	return nil
}

// kubeletConfig is the KubeletConfiguration: kubeadm's choices
// (webhook authentication and authorization, the cluster CA, rotation),
// the cgroupfs driver on cgroup v1, every path under the node's directory,
// and NodeDiskGuard.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[1]s
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
failCgroupV1: false
clusterDNS:
- %[2]s
clusterDomain: %[3]s
containerRuntimeEndpoint: unix://%[4]s
rotateCertificates: true
resolvConf: %[5]s
podLogsDir: %[6]s
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
staticPodPath: ""
` + NodeDiskGuard

// NodeDiskGuard is KubeletConfiguration that keeps a test node's images and
// pods when the disk it shares with the rest of the machine fills (build
// caches, other runs): images are imported offline and cannot be pulled
// again, so image garbage collection at the default 85% (seen at 85% of
// this machine's disk during a conformance run) would leave every later pod
// without its sandbox image, and eviction at 15% free would kill the
// specs' pods. Collection never starts, and only a nearly full disk (1 GiB left) evicts.
const NodeDiskGuard = `imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  imagefs.available: "1Gi"
  nodefs.available: "1Gi"
  memory.available: "100Mi"
`

// resolvConf is what pods with dnsPolicy Default (CoreDNS) get: no server
// outside the machine.
const resolvConf = "nameserver 127.0.0.1\n"

// KubeletKubeconfig is where the kubelet writes its kubeconfig once its
// bootstrap CSR is signed.
func (n *Node) KubeletKubeconfig() string { return filepath.Join(n.Dir, "kubelet.conf") }

// StartKubelet writes the bootstrap kubeconfig from the discovered cluster
// and the token, the kubelet's configuration, and starts it: it
// TLS-bootstraps its client certificate through a CSR.
func (n *Node) StartKubelet(cluster *clientcmdapi.Config, tok Token) error {
	boot := filepath.Join(n.Dir, "bootstrap-kubelet.conf")
	if err := writeBootstrapKubeconfig(boot, cluster, tok); err != nil {
		return err
	}
	rc := filepath.Join(n.Dir, "resolv.conf")
	if err := os.WriteFile(rc, []byte(resolvConf), 0o644); err != nil {
		return err
	}
	cfg := fmt.Sprintf(kubeletConfig, n.CACertFile, n.ClusterDNS, n.ClusterDomain, n.containerdSocket(), rc, filepath.Join(n.Dir, "pod-logs"))
	cfgPath := filepath.Join(n.Dir, "kubelet-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	p, err := startProc("kubelet", filepath.Join(n.LogDir, "kubelet.log"), filepath.Join(n.BinDir, "kubelet"),
		"--config="+cfgPath,
		"--bootstrap-kubeconfig="+boot,
		"--kubeconfig="+n.KubeletKubeconfig(),
		"--cert-dir="+filepath.Join(n.Dir, "pki"),
		"--root-dir="+n.KubeletRootDir(),
		"--node-ip="+n.IP,
		"--hostname-override="+n.Name,
		"--v=2",
	)
	if err != nil {
		return err
	}
	n.kubelet = p
	return nil
}

// KubeletRunning reports whether the kubelet process is alive.
func (n *Node) KubeletRunning() bool { return n.kubelet != nil && !n.kubelet.exited() }

// CNIConfig is a node's pod network: a bridge (cni0, the pods' gateway,
// hairpin for a pod reaching itself through a Service) with host-local
// addresses from the node's podCIDR (the format's first value) kept in a
// data directory (its second), and portmap for hostPort.
const CNIConfig = `{
  "cniVersion": "0.4.0",
  "name": "kcm-e2e-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// WriteCNIConfig writes the pod network's configuration for the node's
// podCIDR (allocated by the controller manager's node-ipam-controller);
// containerd's CRI picks it up and the node becomes Ready.
func (n *Node) WriteCNIConfig(podCIDR string) error {
	if strings.Contains(podCIDR, ":") {
		return fmt.Errorf("node: IPv6 podCIDR %s not supported", podCIDR)
	}
	conf := fmt.Sprintf(CNIConfig, podCIDR, filepath.Join(n.Dir, "cni", "ipam"))
	tmp := filepath.Join(n.cniConfDir(), ".10-kcm.conflist")
	if err := os.WriteFile(tmp, []byte(conf), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(n.cniConfDir(), "10-kcm.conflist"))
}

func writeSysctl(name, value string) error {
	return os.WriteFile(filepath.Join("/proc/sys", name), []byte(value), 0o644)
}

func readSysctl(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc/sys", name))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// KubeletRootDir is the kubelet's --root-dir: specs that deploy to the
// kubelet's plugin directories (DRA, CSI) need it as e2e.test's
// --kubelet-root-dir.
func (n *Node) KubeletRootDir() string { return filepath.Join(n.Dir, "kubelet") }
