// Package kubeadm builds, for `make e2e-kubeadm` (cmd/e2e-kubeadm), a
// kind-like cluster on this machine with kubeadm itself: each node is a
// network, mount and UTS namespace the test creates (kind's nodes are
// containers with the same three), joined to a bridge on a test-made
// address range, with its own /etc/kubernetes, /var/lib/kubelet,
// /var/lib/etcd, containerd state and socket, CNI state and cgroup root,
// bind-mounted inside its mount namespace from a directory of the run.
//
// In each node run containerd (Debian's, as in test/node) and a kubelet
// started the way kubeadm's systemd drop-in starts it, from the files
// kubeadm writes (/var/lib/kubelet/kubeadm-flags.env and config.yaml):
// there is no systemd here, so a watcher starts the kubelet once kubeadm
// has written them. Images are OCI archives written from binaries built
// from the Go module proxy (test/node/image) under the names kubeadm
// v1.37.1 uses, imported into each node's containerd: nothing is pulled.
//
// Cleanup kills everything the nodes ran (by cgroup and by namespace),
// removes the namespaces, links, cgroups, mounts and paths the run made,
// and Verify checks that the machine is as it was.
package kubeadm
