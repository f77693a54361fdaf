//go:build tools

// Package tools pins what `make e2e-node` and `make e2e-kubeadm` run on their
// real nodes: kubeadm, the kubelet, kube-proxy and upstream's test image
// program agnhost, all from
// k8s.io/kubernetes. A module of its own, so that their dependencies leave
// hack/tools/k8s's go.sum (and so the control-plane binaries' build stamps)
// alone. Nothing here is product code; see hack/tools/build.sh.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/test/images/agnhost"
)
