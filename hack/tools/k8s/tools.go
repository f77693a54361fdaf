//go:build tools

// Package tools pins the upstream Kubernetes commands that the tests run
// against. Nothing here is product code; see hack/tools/build.sh.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
