// Command kube-controller-manager is kcm's drop-in replacement for the
// Kubernetes controller manager.
package main

import (
	"context"
	"os"
	"runtime/debug"
	"strconv"

	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go and leader election metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/internal/procs"
)

// defaultGCPercent is the GOGC kcm runs with when the GOGC environment
// variable is unset (upstream runs with Go's default, 100). Most of a
// controller manager's heap is its informer caches, which live as long as
// the process: collecting when the heap has grown by 60% of them instead of
// all of them keeps peak memory about a fifth lower, for a few percent more
// CPU (docs/BENCHMARKS.md). It is a variable so that a build can set it
// (-ldflags -X main.defaultGCPercent=N).
var defaultGCPercent = "60"

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		if pct, err := strconv.Atoi(defaultGCPercent); err == nil {
			debug.SetGCPercent(pct)
		}
	}
	// Unless GOMAXPROCS is set, size it to the CPU demand (internal/procs):
	// upstream keeps Go's default, the CPU count, however idle it is.
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		if g := procs.New(); g != nil {
			go g.Run(context.Background())
		}
	}
	os.Exit(app.Main())
}
