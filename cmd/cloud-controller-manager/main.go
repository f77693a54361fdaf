package main

import (
	"os"

	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go and leader election metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/kcm-dev/kcm/cmd/cloud-controller-manager/app"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
)

// defaultGCPercent is the GOGC the process runs with when the GOGC
// environment variable is unset (cmapp.TuneRuntime says why); a build can
// set it with -ldflags -X main.defaultGCPercent=N.
var defaultGCPercent = "60"

func main() {
	cmapp.TuneRuntime(defaultGCPercent)
	os.Exit(app.Main())
}
