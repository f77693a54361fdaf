package kubeadm

import (
	"fmt"

	"github.com/kcm-dev/kcm/test/node"
)

// initConfig is the kubeadm configuration of `kubeadm init`, the way kind
// writes one: the node's name and address, the pod and Service subnets,
// and only what this machine needs beyond kubeadm's defaults. It sets no
// file mode and loosens no other check.
//   - The kubelet: the cgroupfs driver on cgroup v1 (failCgroupV1: false),
//     and a cgroup root of the node's own (--cgroup-root). On cgroup v1,
//     kubeadm's SystemVerification preflight check fails for kubelets from
//     v1.35 on, and its message says to set failCgroupV1: false and skip
//     that check: ignorePreflightErrors names it and nothing else.
//   - kube-proxy: conntrack's maxPerCore 0, as kind sets it, since
//     nf_conntrack_max cannot be set from a network namespace.
//   - The apiserver: an audit log of the controller manager's requests (the
//     swap checks count them), in /etc/kubernetes/audit of the node.
//   - The patches directory (manifests/kind-patches) when kcm's image is
//     to run: kubeadm does not take --patches together with --config.
const initConfig = `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: %[1]s
  ttl: 2h0m0s
localAPIEndpoint:
  advertiseAddress: %[2]s
  bindPort: 6443
nodeRegistration:
  name: %[3]s
  criSocket: unix:///run/containerd/containerd.sock
  ignorePreflightErrors:
  - SystemVerification
  kubeletExtraArgs:
  - name: node-ip
    value: %[2]s
  - name: cgroup-root
    value: %[4]s
%[5]s---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: ` + KubeVersion + `
clusterName: kcm-e2e-kubeadm
controlPlaneEndpoint: %[2]s:6443
networking:
  podSubnet: ` + PodSubnet + `
  serviceSubnet: ` + ServiceSubnet + `
apiServer:
  extraArgs:
  - name: audit-policy-file
    value: /etc/kubernetes/audit/policy.yaml
  - name: audit-log-path
    value: /etc/kubernetes/audit/audit.log
  extraVolumes:
  - name: audit
    hostPath: /etc/kubernetes/audit
    mountPath: /etc/kubernetes/audit
    pathType: DirectoryOrCreate
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
` + node.NodeDiskGuard + `---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
`

// joinConfig is the kubeadm configuration of `kubeadm join` for a worker:
// token discovery pinned to the cluster CA's public key hash.
const joinConfig = `apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: %[1]s:6443
    token: %[2]s
    caCertHashes:
    - %[3]s
nodeRegistration:
  name: %[4]s
  criSocket: unix:///run/containerd/containerd.sock
  ignorePreflightErrors:
  - SystemVerification
  kubeletExtraArgs:
  - name: node-ip
    value: %[5]s
  - name: cgroup-root
    value: %[6]s
`

// auditPolicy records the controller manager's requests: as itself and as
// the per-controller service accounts of kube-system
// (--use-service-account-credentials), at Metadata level.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: Metadata
  users: ["system:kube-controller-manager"]
- level: Metadata
  userGroups: ["system:serviceaccounts:kube-system"]
- level: None
`

func renderInit(cp *Node, token, patches string) string {
	p := ""
	if patches != "" {
		p = fmt.Sprintf("patches:\n  directory: %s\n", patches)
	}
	return fmt.Sprintf(initConfig, token, cp.IP, cp.Name, cp.Cgroup(), p)
}

func renderJoin(cp, n *Node, token, caHash string) string {
	return fmt.Sprintf(joinConfig, cp.IP, token, caHash, n.Name, n.IP, n.Cgroup())
}
