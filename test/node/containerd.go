package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kcm-dev/kcm/test/node/image"
)

// ContainerdConfig is containerd 1.6's (config version 2, which containerd 2
// migrates, CDI on by default there): everything under
// the node's directory, the CRI with the cgroupfs driver and
// restrict_oom_score_adj (root here lacks CAP_SYS_RESOURCE, so it may not
// lower a process's oom_score_adj), the node's CNI configuration, and our
// pause image as the sandbox image. A containerd given by path runs the
// runc shim built beside it (runtime_path): containerd looks for the shim on
// PATH first, where the host's may be older and speak another start
// protocol (containerd 2 starting Debian's 1.6 shim fails every sandbox
// with "type with url <sandbox id>: not found").
const ContainerdConfig = `version = 2
root = %[1]q
state = %[2]q
oom_score = 0

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"%[10]s
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
    max_conf_num = 1
`

func (n *Node) containerdSocket() string {
	return filepath.Join(n.Dir, "containerd", "containerd.sock")
}

// shimRuntimePath is the config line naming the runc shim beside a
// containerd given by path, or nothing.
func (n *Node) shimRuntimePath() string {
	if n.Containerd == "" {
		return ""
	}
	shim := filepath.Join(filepath.Dir(n.Containerd), "containerd-shim-runc-v2")
	if _, err := os.Stat(shim); err != nil {
		return ""
	}
	abs, err := filepath.Abs(shim)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("\n      runtime_path = %q", abs)
}

func (n *Node) startContainerd(ctx context.Context) error {
	d := filepath.Join(n.Dir, "containerd")
	for _, sub := range []string{"root", "state", "opt", "runc"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o711); err != nil {
			return err
		}
	}
	cfg := fmt.Sprintf(ContainerdConfig, filepath.Join(d, "root"), filepath.Join(d, "state"), n.containerdSocket(),
		n.containerdSocket()+".ttrpc", filepath.Join(d, "opt"), PauseImage, filepath.Join(d, "runc"),
		CNIBinDir, n.cniConfDir(), n.shimRuntimePath())
	cfgPath := filepath.Join(d, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	bin := n.Containerd
	if bin == "" {
		bin = "containerd"
	}
	p, err := startProc("containerd", filepath.Join(n.LogDir, "containerd.log"), bin, "--config", cfgPath)
	if err != nil {
		return err
	}
	n.containerd = p
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := n.ctr("version"); err == nil {
			return nil
		} else if p.exited() || time.Now().After(deadline) {
			return fmt.Errorf("node: containerd did not come up (log %s): %v", filepath.Join(n.LogDir, "containerd.log"), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ctr runs containerd's ctr against the node's containerd, in the CRI's
// namespace.
func (n *Node) ctr(args ...string) (string, error) {
	return run("ctr", append([]string{"--address", n.containerdSocket(), "-n", "k8s.io"}, args...)...)
}

// importImages writes each image as an OCI layout archive and imports it.
func (n *Node) importImages() error {
	imgs, err := Images(n.BinDir)
	if err != nil {
		return err
	}
	dir := filepath.Join(n.Dir, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, img := range imgs {
		p := filepath.Join(dir, fmt.Sprintf("%d.tar", i))
		if err := image.WriteFile(p, img); err != nil {
			return err
		}
		if _, err := n.ctr("images", "import", p); err != nil {
			return err
		}
		// The kubelet's image garbage collection leaves pinned images alone
		// (the CRI pins the sandbox image itself).
		if _, err := n.ctr("images", "label", img.Name, "io.cri-containerd.pinned=pinned"); err != nil {
			return err
		}
		n.logf("node: imported %s", img.Name)
	}
	return os.RemoveAll(dir)
}
