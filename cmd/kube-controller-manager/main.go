// Command kube-controller-manager is kcm's drop-in replacement for the
// Kubernetes controller manager.
package main

import (
	"os"

	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go and leader election metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
)

// defaultGCPercent is the GOGC kcm runs with when the GOGC environment
// variable is unset (cmapp.TuneRuntime says why). It is a variable so that
// a build can set it (-ldflags -X main.defaultGCPercent=N).
var defaultGCPercent = "60"

func main() {
	cmapp.TuneRuntime(defaultGCPercent)
	os.Exit(app.Main())
}
