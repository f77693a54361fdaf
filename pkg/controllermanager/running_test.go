package controllermanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/component-base/metrics/testutil"
)

// blocking runs until its context ends, reporting that it started.
type blocking struct {
	name    string
	started chan struct{}
}

func (b blocking) Name() string { return b.name }
func (b blocking) Run(ctx context.Context) {
	close(b.started)
	<-ctx.Done()
}

const runningHeader = `
# HELP running_managed_controllers [BETA] Indicates where instances of a controller are currently running
# TYPE running_managed_controllers gauge
`

// running_managed_controllers is 1 while a controller with a RunningMetric
// runs and 0 once it returned, as upstream's nodeipam sets it; a controller
// without one has no series.
func TestRunningManagedControllers(t *testing.T) {
	controllersmetrics.Register()
	ipam := blocking{name: "node-ipam-controller", started: make(chan struct{})}
	other := blocking{name: "job-controller", started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() {
		done <- Run(ctx, []Controller{
			&tracked{Controller: ipam, runningMetric: "nodeipam", manager: "kube-controller-manager"},
			&tracked{Controller: other},
		}, 0, time.Minute)
	}()
	<-ipam.started
	<-other.started
	want := runningHeader + `running_managed_controllers{manager="kube-controller-manager",name="nodeipam"} 1
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), "running_managed_controllers"); err != nil {
		t.Errorf("while running: %v", err)
	}
	cancel()
	if !<-done {
		t.Fatal("controllers did not stop")
	}
	want = runningHeader + `running_managed_controllers{manager="kube-controller-manager",name="nodeipam"} 0
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), "running_managed_controllers"); err != nil {
		t.Errorf("after stop: %v", err)
	}
}
