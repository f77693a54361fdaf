package parity

import (
	"context"

	"github.com/kcm-dev/kcm/test/cluster"
)

// labelControl is the run of upstream under the same fault as kcm
// (Options.FaultBoth): the control that says whether a difference under a
// fault is kcm's or the fault's.
const labelControl = "upstream-fault"

// Fault is a disturbance of the control plane switched on for a run
// (Options.Fault). Its implementations live in test/chaos; parity only
// calls the hooks, so that a faulted run is otherwise exactly a calm one and
// its capture diffs against upstream's calm run with the same normaliser.
type Fault interface {
	// Name names the fault in logs.
	Name() string
	// Configure adjusts the cluster's options before it starts (apiserver
	// flags, controller manager arguments).
	Configure(o *cluster.Options) error
	// Start switches the fault on once the cluster is up and the controller
	// manager leads, before the scenario's objects are applied.
	Start(ctx context.Context, c *cluster.Cluster, logf func(format string, args ...any)) (FaultRun, error)
}

// StepHook is a FaultRun that acts between the scenario's steps: AfterStep
// runs after the scenario's objects are applied (index -1, st nil) and
// after each step that succeeded, before the next one starts.
type StepHook interface {
	AfterStep(ctx context.Context, index int, st *Step) error
}

// FaultRun is a fault switched on in one run.
type FaultRun interface {
	// End switches the fault off after the last step, before the settle
	// and capture; it returns once the controller manager runs and leads
	// again.
	End(ctx context.Context) error
	// Close releases what the fault holds (a proxy) as the run ends, just
	// before the cluster stops.
	Close() error
}
