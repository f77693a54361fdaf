package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/procs"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// Command is what one controller-manager command brings to the cobra
// command both share.
type Command struct {
	Use, Long string
	// Flags holds every section of the command line in --help order.
	Flags cliflag.NamedFlagSets
	// Logs is the logging configuration the flags fill in; it is applied
	// (with FeatureGate) before anything is logged.
	Logs        *logsapi.LoggingConfiguration
	FeatureGate featuregate.FeatureGate
	// PreRun runs once the flags are parsed, before anything else (kcm
	// applies --feature-gates and --emulated-version there). May be nil.
	PreRun func() error
	// Config validates the flags and returns the configuration to run and
	// the controllers to choose from.
	Config func() (*Config, controllermanager.Registry, error)
}

// Cobra returns the command: it rejects arguments, prints --help in
// sections as upstream does, applies the logging flags, logs every flag
// at -v=1, and runs until SIGTERM or SIGINT.
func (c Command) Cobra() *cobra.Command {
	cmd := &cobra.Command{
		Use:           c.Use,
		Long:          c.Long,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			restclient.SetDefaultWarningHandler(restclient.NoWarnings{})
			if c.PreRun != nil {
				return c.PreRun()
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			if err := logsapi.ValidateAndApply(c.Logs, c.FeatureGate); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())
			cfg, registry, err := c.Config()
			if err != nil {
				return err
			}
			return Run(server.SetupSignalContext(), cfg, registry)
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
	fs := cmd.Flags()
	for _, f := range c.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, c.Flags, cols)
	return cmd
}

// AddGlobalFlags adds --version, --help and klog's flags to fs (the
// "global" section), as upstream's commands do; name is the command's, as
// --help's own help text shows it.
func AddGlobalFlags(fs *pflag.FlagSet, name string) {
	verflag.AddFlags(fs)
	globalflag.AddGlobalFlags(fs, name, logs.SkipLoggingConfigurationFlags())
}

// Main runs cmd and returns the process exit code: 0, or 1 with one line
// per problem on stderr.
func Main(cmd *cobra.Command) int {
	logs.InitLogs()
	defer logs.FlushLogs()
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		for _, line := range strings.Split(ErrorLines(err), "\n") {
			fmt.Fprintln(os.Stderr, "error: "+line)
		}
		klog.Flush()
		return 1
	}
	return 0
}

// ErrorLines formats a validation error as one line per problem.
func ErrorLines(err error) string {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		lines := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			lines = append(lines, e.Error())
		}
		return strings.Join(lines, "\n")
	}
	return err.Error()
}

// TuneRuntime sets the garbage collector's target to defaultGCPercent
// unless GOGC is set (upstream runs with Go's default, 100), and, unless
// GOMAXPROCS is set, sizes GOMAXPROCS to the CPU demand (internal/procs;
// upstream keeps Go's default, the CPU count, however idle it is).
//
// Most of a controller manager's heap is its informer caches, which live
// as long as the process: collecting when the heap has grown by 60% of
// them instead of all of them kept the deployments roll phase's peak RSS
// 11% lower, for a few percent more CPU (docs/ARCHITECTURE.md,
// "Performance devices").
func TuneRuntime(defaultGCPercent string) {
	if _, set := os.LookupEnv("GOGC"); !set {
		if pct, err := strconv.Atoi(defaultGCPercent); err == nil {
			debug.SetGCPercent(pct)
		}
	}
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		if g := procs.New(); g != nil {
			go g.Run(context.Background())
		}
	}
}
