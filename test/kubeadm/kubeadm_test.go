package kubeadm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestKubeadmFlags(t *testing.T) {
	n := &Node{Name: "w", Dir: t.TempDir()}
	if _, err := n.kubeadmFlags(); err == nil {
		t.Fatal("flags before kubeadm wrote its files")
	}
	dir := n.HostPath("/var/lib/kubelet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, s := range map[string]string{
		"config.yaml":       "kind: KubeletConfiguration\n",
		"kubeadm-flags.env": `KUBELET_KUBEADM_ARGS="--cgroup-root=/kcm-e2e-w --container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=172.31.250.11"` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args, err := n.kubeadmFlags()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml", "--cgroup-root=/kcm-e2e-w",
		"--container-runtime-endpoint=unix:///run/containerd/containerd.sock", "--node-ip=172.31.250.11"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n%q\nwant\n%q", args, want)
	}
	if got := n.HostPath("/etc/kubernetes/admin.conf"); got != filepath.Join(n.Dir, "root/etc/kubernetes/admin.conf") {
		t.Errorf("HostPath of a node path: %s", got)
	}
	if got := n.HostPath("/usr/bin/kubeadm"); got != "/usr/bin/kubeadm" {
		t.Errorf("HostPath of a shared path: %s", got)
	}
}

// The configurations are YAML documents kubeadm can read: each parses,
// names its kind, and carries the node's settings.
func TestConfigs(t *testing.T) {
	cp := &Node{Name: "kcm-control-plane", IP: "172.31.250.10"}
	w := &Node{Name: "kcm-worker", IP: "172.31.250.11"}
	for name, c := range map[string]struct {
		text  string
		kinds []string
		has   []string
	}{
		"init": {renderInit(cp, "abcdef.0123456789abcdef", "/p"), []string{"InitConfiguration", "ClusterConfiguration", "KubeletConfiguration", "KubeProxyConfiguration"},
			[]string{"advertiseAddress: 172.31.250.10", "directory: /p", "value: /kcm-e2e-kcm-control-plane", "podSubnet: 10.244.0.0/16"}},
		"init without patches": {renderInit(cp, "abcdef.0123456789abcdef", ""), nil, nil},
		"join": {renderJoin(cp, w, "abcdef.0123456789abcdef", "sha256:00"), []string{"JoinConfiguration"},
			[]string{"apiServerEndpoint: 172.31.250.10:6443", "name: kcm-worker", "value: /kcm-e2e-kcm-worker"}},
	} {
		var kinds []string
		for _, doc := range strings.Split(c.text, "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			kinds = append(kinds, m["kind"].(string))
		}
		if c.kinds != nil && !slices.Equal(kinds, c.kinds) {
			t.Errorf("%s: kinds %v, want %v", name, kinds, c.kinds)
		}
		for _, s := range c.has {
			if !strings.Contains(c.text, s) {
				t.Errorf("%s: no %q in\n%s", name, s, c.text)
			}
		}
		if strings.Contains(c.text, "patches:") != strings.Contains(c.text, "directory: /p") {
			t.Errorf("%s: patches without a directory", name)
		}
	}
}
