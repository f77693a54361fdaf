package kubeadm

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/node"
)

// The network every node is on: a bridge on this machine with BridgeIP,
// and one veth per node into the node's network namespace. Nothing routes
// from it to anywhere else (the nodes have no default route, and this
// machine does not forward between interfaces for them).
const (
	Bridge       = "kcmk0"
	BridgeIP     = "172.31.250.1"
	subnetPrefix = "172.31.250."
	prefixLen    = "/24"
	// ServiceSubnet and PodSubnet are kubeadm's networking settings
	// (kubeadm's default and kind's).
	ServiceSubnet = "10.96.0.0/12"
	PodSubnet     = "10.244.0.0/16"
	// nameserver is what /etc/resolv.conf of a node names (and so what
	// CoreDNS forwards to): an address on the bridge that no one has, so
	// that a query for a name outside the cluster fails here, and never
	// leaves the machine.
	nameserver = subnetPrefix + "254"
	// nsDir holds the bind mounts that keep the nodes' mount and UTS
	// namespaces alive; a private mount, as unshare requires.
	nsDir = "/run/kcm-e2e-kubeadm"
	// DefaultDir holds every node's directory.
	DefaultDir = "/var/lib/kcm-e2e-kubeadm"
)

// nodePaths are the directories a node has of its own, bind-mounted in its
// mount namespace from its directory (as a kind node has them in its
// container): kubeadm's and the kubelet's, etcd's data, containerd's state
// and socket, CNI configuration and state, pod logs.
var nodePaths = []string{
	"/etc/kubernetes", "/var/lib/kubelet", "/var/lib/etcd", "/var/lib/containerd", "/run/containerd",
	"/etc/cni/net.d", "/var/lib/cni", "/var/log/pods", "/var/log/containers",
}

// Node is one node: its namespaces, containerd and kubelet.
type Node struct {
	// Name is the node's hostname and Node name, IP its address on the
	// bridge.
	Name, IP string
	// Dir is the node's directory: root/ holds nodePaths.
	Dir, LogDir, BinDir string
	Logf                func(string, ...any)

	containerd, kubelet *node.Proc
	// stopWatch ends WatchKubelet's loop, which closes watchDone.
	stopWatch, watchDone chan struct{}
}

func (n *Node) netns() string   { return "kcm-" + n.Name }
func (n *Node) mntFile() string { return filepath.Join(nsDir, n.Name+".mnt") }
func (n *Node) utsFile() string { return filepath.Join(nsDir, n.Name+".uts") }
func (n *Node) veth() string    { return "kcmv-" + n.IP[strings.LastIndex(n.IP, ".")+1:] }

// Cgroup is the node's cgroup root, below which the kubelet puts its pods
// (--cgroup-root) and the node's own processes run (system).
func (n *Node) Cgroup() string { return "/kcm-e2e-" + n.Name }

// HostPath is where path of the node's file system is on this machine.
func (n *Node) HostPath(path string) string {
	for _, p := range nodePaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return filepath.Join(n.Dir, "root", path)
		}
	}
	return path
}

// nodeBinaries are the programs a kind node has in its PATH (kubeadm's
// preflight runs `kubelet --version`).
var nodeBinaries = []string{"kubeadm", "kubelet", "kubectl"}

// command is name run inside the node's namespaces, with nodeBinaries
// first in PATH.
func (n *Node) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("nsenter", append([]string{"--net=/run/netns/" + n.netns(), "--mount=" + n.mntFile(), "--uts=" + n.utsFile(), "--", name}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(n.Dir, "bin")+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	return cmd
}

// Exec runs name inside the node to completion (bounded by timeout) and
// returns its combined output.
func (n *Node) Exec(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := n.command(name, args...)
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env, c.WaitDelay = cmd.Env, 2*time.Second
	out, err := c.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s on %s: %w: %s", strings.Join(append([]string{name}, args...), " "), n.Name, err, lastLines(string(out), 20))
	}
	return string(out), nil
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, "\n")
}

func sh(args ...string) error {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// SetUpNetwork creates the bridge with BridgeIP; nsDir as a private mount.
func SetUpNetwork() error {
	if err := os.MkdirAll(nsDir, 0o700); err != nil {
		return err
	}
	for _, c := range [][]string{
		{"mount", "--bind", nsDir, nsDir}, {"mount", "--make-private", nsDir},
		{"ip", "link", "add", Bridge, "type", "bridge"},
		{"ip", "addr", "add", BridgeIP + prefixLen, "dev", Bridge},
		{"ip", "link", "set", Bridge, "up"},
	} {
		if err := sh(c...); err != nil {
			return err
		}
	}
	// cni0 bridges inside the nodes go through their iptables (Service
	// traffic between pods of one node); the sysctls are per network
	// namespace.
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		return sh("modprobe", "br_netfilter")
	}
	return nil
}

// Create makes the node: its directories, network namespace with a veth on
// the bridge, mount and UTS namespaces with its own paths and hostname, its
// sysctls and cgroup root. Nothing runs in it yet.
func (n *Node) Create() error {
	for _, p := range append(nodePaths, "/lib/modules") {
		if err := os.MkdirAll(p, 0o755); err != nil { // mount points on the host
			return err
		}
		if err := os.MkdirAll(filepath.Join(n.Dir, "root", p), 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(n.LogDir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(n.Dir, "bin"), 0o755); err != nil {
		return err
	}
	for _, b := range nodeBinaries {
		if err := os.Symlink(filepath.Join(n.BinDir, b), filepath.Join(n.Dir, "bin", b)); err != nil {
			return err
		}
	}
	resolv := filepath.Join(n.Dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+nameserver+"\n"), 0o644); err != nil {
		return err
	}
	ns := n.netns()
	for _, c := range [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", n.veth(), "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", n.veth(), "master", Bridge, "up"},
		{"ip", "-n", ns, "addr", "add", n.IP + prefixLen, "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		// The node's own processes (host-network pods among them) reach
		// Service addresses: kube-proxy's DNAT happens after this route
		// lookup.
		{"ip", "-n", ns, "route", "add", ServiceSubnet, "dev", "eth0"},
		{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"},
	} {
		if err := sh(c...); err != nil {
			return err
		}
	}
	for _, f := range []string{n.mntFile(), n.utsFile()} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			return err
		}
	}
	var script strings.Builder
	fmt.Fprintf(&script, "set -e; hostname %s\n", n.Name)
	for _, p := range nodePaths {
		fmt.Fprintf(&script, "mount --bind %s %s\n", filepath.Join(n.Dir, "root", p), p)
	}
	fmt.Fprintf(&script, "mount --bind %s /etc/resolv.conf\n", resolv)
	if err := sh("unshare", "--mount="+n.mntFile(), "--uts="+n.utsFile(), "--propagation", "slave", "sh", "-c", script.String()); err != nil {
		return err
	}
	return n.createCgroups()
}

// cgroupControllers are the cgroup v1 hierarchies the kubelet and runc use.
func cgroupControllers() []string {
	var out []string
	es, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range es {
		if e.IsDir() && e.Type()&os.ModeSymlink == 0 && e.Name() != "unified" {
			out = append(out, e.Name())
		}
	}
	return out
}

func (n *Node) createCgroups() error {
	for _, c := range cgroupControllers() {
		for _, d := range []string{n.Cgroup(), n.Cgroup() + "/system"} {
			p := filepath.Join("/sys/fs/cgroup", c, d)
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if c == "cpuset" { // an empty cpuset admits no process
				for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
					v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuset", f))
					if err != nil {
						return err
					}
					if err := os.WriteFile(filepath.Join(p, f), v, 0o644); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// joinCgroup moves pid into the node's system cgroup in every hierarchy.
func (n *Node) joinCgroup(pid int) error {
	for _, c := range cgroupControllers() {
		p := filepath.Join("/sys/fs/cgroup", c, n.Cgroup(), "system", "cgroup.procs")
		if err := os.WriteFile(p, []byte(fmt.Sprint(pid)), 0o644); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// start runs name in the node as a logged child process in the node's
// cgroup.
func (n *Node) start(name string, args ...string) (*node.Proc, error) {
	cmd := n.command(name, args...)
	p, err := node.StartProc(name, filepath.Join(n.LogDir, filepath.Base(name)+".log"), cmd.Path, cmd.Args[1:]...)
	if err != nil {
		return nil, err
	}
	if err := n.joinCgroup(p.Pid()); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

// StartContainerd starts the node's containerd at kubeadm's default socket
// (unix:///run/containerd/containerd.sock, inside the node) and imports
// the images.
func (n *Node) StartContainerd(ctx context.Context, imageArchives []string) error {
	cfg := fmt.Sprintf(node.ContainerdConfig, "/var/lib/containerd", "/run/containerd", "/run/containerd/containerd.sock",
		"/run/containerd/containerd.sock.ttrpc", "/var/lib/containerd/opt", node.PauseImage, "/run/containerd/runc",
		node.CNIBinDir, "/etc/cni/net.d", "")
	cfgPath := filepath.Join(n.Dir, "containerd.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	p, err := n.start("containerd", "--config", cfgPath)
	if err != nil {
		return err
	}
	n.containerd = p
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := n.Ctr(ctx, "version"); err == nil {
			break
		} else if p.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("containerd on %s did not come up (log %s): %v", n.Name, n.LogDir, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, a := range imageArchives {
		out, err := n.Ctr(ctx, "images", "import", "--all-platforms", a)
		if err != nil {
			return err
		}
		// Pinned: the kubelet's image garbage collection leaves them alone.
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "unpacking" {
				if _, err := n.Ctr(ctx, "images", "label", f[1], "io.cri-containerd.pinned=pinned"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Ctr runs containerd's ctr in the node, in the CRI's namespace.
func (n *Node) Ctr(ctx context.Context, args ...string) (string, error) {
	return n.Exec(ctx, time.Minute, "ctr", append([]string{"-n", "k8s.io"}, args...)...)
}

// WatchKubelet starts the kubelet, as kubeadm's systemd drop-in does
// (10-kubeadm.conf: the bootstrap and final kubeconfigs, config.yaml and
// the flags of kubeadm-flags.env), once kubeadm has written its files, and
// restarts it if it exits, as systemd's Restart=always does.
func (n *Node) WatchKubelet() {
	n.stopWatch, n.watchDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(n.watchDone)
		for {
			select {
			case <-n.stopWatch:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if n.kubelet != nil && !n.kubelet.Exited() {
				continue
			}
			args, err := n.kubeadmFlags()
			if err != nil {
				continue // not written yet
			}
			if n.kubelet != nil {
				n.Logf("kubeadm: the kubelet on %s exited; starting it again", n.Name)
			}
			p, err := n.start(filepath.Join(n.BinDir, "kubelet"), args...)
			if err != nil {
				n.Logf("kubeadm: kubelet on %s: %v", n.Name, err)
				continue
			}
			n.kubelet = p
			n.Logf("kubeadm: kubelet started on %s: %s", n.Name, strings.Join(args, " "))
		}
	}()
}

// kubeadmFlags is the kubelet's command line of kubeadm's drop-in, once
// kubeadm wrote config.yaml and kubeadm-flags.env.
func (n *Node) kubeadmFlags() ([]string, error) {
	if _, err := os.Stat(n.HostPath("/var/lib/kubelet/config.yaml")); err != nil {
		return nil, err
	}
	f, err := os.Open(n.HostPath("/var/lib/kubelet/kubeadm-flags.env"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	args := []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml"}
	found := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "KUBELET_KUBEADM_ARGS="); ok {
			args = append(args, strings.Fields(strings.Trim(v, `"`))...)
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("no KUBELET_KUBEADM_ARGS yet")
	}
	return args, nil
}

// Stop stops the watcher, the kubelet and containerd.
func (n *Node) Stop() {
	if n.stopWatch != nil {
		close(n.stopWatch)
		<-n.watchDone
		n.stopWatch = nil
	}
	for _, p := range []*node.Proc{n.kubelet, n.containerd} {
		if p != nil && !p.Exited() {
			p.Stop(15 * time.Second)
		}
	}
}

// SetPodNetwork does what kind's kindnet does for a node: writes its CNI
// configuration (test/node's bridge) for its podCIDR, which the containerd
// CRI picks up (the node turns Ready), and routes every other node's
// podCIDR to that node.
func (n *Node) SetPodNetwork(podCIDR string, others map[string]string) error {
	if strings.Contains(podCIDR, ":") {
		return fmt.Errorf("kubeadm: IPv6 podCIDR %s not supported", podCIDR)
	}
	for cidr, ip := range others {
		if err := sh("ip", "-n", n.netns(), "route", "replace", cidr, "via", ip, "dev", "eth0"); err != nil {
			return err
		}
	}
	dir := n.HostPath("/etc/cni/net.d")
	tmp := filepath.Join(dir, ".10-kcm.conflist")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf(node.CNIConfig, podCIDR, "/var/lib/cni/networks")), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "10-kcm.conflist"))
}
