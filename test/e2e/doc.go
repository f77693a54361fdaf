// Package e2e runs this kube-controller-manager with kubeadm's command line
// on a whole local control plane (etcd, kube-apiserver, kube-scheduler, kwok
// fake nodes; see test/cluster) and checks what an operator would.
package e2e
