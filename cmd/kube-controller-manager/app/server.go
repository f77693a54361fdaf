package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
	"github.com/kcm-dev/kcm/pkg/features"
)

// name is upstream's command name: the process's user agent, the source
// of its Events and its default Lease.
const name = "kube-controller-manager"

const long = `The Kubernetes controller manager is a daemon that embeds
the core control loops shipped with Kubernetes. In applications of robotics and
automation, a control loop is a non-terminating loop that regulates the state of
the system. In Kubernetes, a controller is a control loop that watches the shared
state of the cluster through the apiserver and makes changes attempting to move the
current state towards the desired state. Examples of controllers that ship with
Kubernetes today are the replication controller, endpoints controller, namespace
controller, and serviceaccounts controller.

This is kcm, a from-scratch implementation with upstream v1.37's command line.`

// NewCommand returns the kube-controller-manager command.
func NewCommand() *cobra.Command {
	o, err := newOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fss := o.Flags()
	addGlobalFlags(fss.FlagSet("global"))
	return cmapp.Command{
		Use:         name,
		Long:        long,
		Flags:       fss,
		Logs:        o.Logs,
		FeatureGate: features.Gate(),
		PreRun:      o.Globals.Set,
		Config: func() (*cmapp.Config, controllermanager.Registry, error) {
			c, err := newConfig(o)
			// The registry depends on --cloud-provider (pkg/cloudcontrollers).
			return c, o.Registry(), err
		},
	}.Cobra()
}

func newOptions() (*options.Options, error) {
	globals, err := features.SetupGlobals()
	if err != nil {
		return nil, err
	}
	return options.New(NewRegistry(), globals), nil
}

// addGlobalFlags adds --version, --help and klog's flags to the "global"
// section, as upstream does.
func addGlobalFlags(fs *pflag.FlagSet) { cmapp.AddGlobalFlags(fs, name) }

// Main runs the command and returns the process exit code: 0, or 1 with
// one line per problem on stderr.
func Main() int { return cmapp.Main(NewCommand()) }
