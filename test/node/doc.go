// Package node runs one real Kubernetes node on this machine for
// `make e2e-node` (cmd/e2e-node): containerd 1.6 and runc from Debian, with
// their state under one directory; images written as OCI layout archives
// (package image) from hack/tools' binaries and imported, no registry; a
// kubelet that joins the way `kubeadm join` does (token discovery of the
// cluster-info ConfigMap the bootstrap signer signed, TLS bootstrap through
// a CSR); a bridge CNI in the node's podCIDR; and kubeadm's kube-proxy and
// CoreDNS manifests (manifests/). Cleanup and Verify return the machine to
// the state New recorded: processes, mounts, network namespaces, links,
// iptables chains, cgroups, sysctls and host paths.
package node
