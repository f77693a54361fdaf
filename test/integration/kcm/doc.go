// Package kcm tests the real kube-controller-manager binary against a real
// kube-apiserver and etcd (envtest): command-line errors, serving and its
// auth matrix, leader election and failover, and the controllers it runs.
package kcm
