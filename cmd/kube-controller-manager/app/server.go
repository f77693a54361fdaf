package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
	"github.com/kcm-dev/kcm/pkg/features"
)

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
	cmd := &cobra.Command{
		Use:           "kube-controller-manager",
		Long:          long,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			restclient.SetDefaultWarningHandler(restclient.NoWarnings{})
			return o.Globals.Set()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			if err := logsapi.ValidateAndApply(o.Logs, features.Gate()); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())
			c, err := newConfig(o)
			if err != nil {
				return err
			}
			ctx := server.SetupSignalContext()
			// The registry depends on --cloud-provider (pkg/cloudcontrollers).
			return Run(ctx, c, o.Registry())
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if len(arg) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	fss := o.Flags()
	addGlobalFlags(&fss)
	fs := cmd.Flags()
	for _, f := range fss.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	return cmd
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
func addGlobalFlags(fss *cliflag.NamedFlagSets) {
	verflag.AddFlags(fss.FlagSet("global"))
	globalflag.AddGlobalFlags(fss.FlagSet("global"), "kube-controller-manager", logs.SkipLoggingConfigurationFlags())
}

// Main runs the command and returns the process exit code: 0, or 1 with
// one line per problem on stderr.
func Main() int {
	logs.InitLogs()
	defer logs.FlushLogs()
	cmd := NewCommand()
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		for _, line := range strings.Split(options.ErrorLines(err), "\n") {
			fmt.Fprintln(os.Stderr, "error: "+line)
		}
		klog.Flush()
		return 1
	}
	return 0
}
