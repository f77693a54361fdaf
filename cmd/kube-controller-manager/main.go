// Command kube-controller-manager is kcm's drop-in replacement for the
// Kubernetes controller manager.
package main

import (
	"os"

	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go and leader election metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
)

func main() { os.Exit(app.Main()) }
