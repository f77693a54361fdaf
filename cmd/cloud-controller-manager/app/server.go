package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	ccmconfig "k8s.io/cloud-provider/config"
	"k8s.io/cloud-provider/options"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
)

// The logging and metrics feature gates join --feature-gates, as in
// upstream's command.
func init() {
	utilruntime.Must(metricsfeatures.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// name is upstream's command name: the process's user agent, the source
// of its Events, its default Lease and its serving certificate's name.
const name = "cloud-controller-manager"

const long = `The Cloud controller manager is a daemon that embeds
the cloud specific control loops shipped with Kubernetes.

This is kcm's, a from-scratch implementation with upstream v1.37's command line.`

// commandLine is what the command parses into: upstream's options and,
// as upstream's command keeps them apart, the logging options.
type commandLine struct {
	*options.CloudControllerManagerOptions
	Logs *logsapi.LoggingConfiguration
}

// newCommandLine returns upstream's defaults and the named flag sets in
// upstream's --help order.
func newCommandLine() (*commandLine, cliflag.NamedFlagSets, error) {
	o, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		return nil, cliflag.NamedFlagSets{}, err
	}
	cl := &commandLine{CloudControllerManagerOptions: o, Logs: logs.NewOptions()}
	r := cloudcontrollers.Registry()
	// No webhooks are registered, as in upstream's own binary.
	fss := o.Flags(r.Names(), r.DisabledByDefault(), r.Aliases(), nil, nil)
	global := fss.FlagSet("global")
	logsapi.AddFlags(cl.Logs, global)
	cmapp.AddGlobalFlags(global, name)
	return cl, fss, nil
}

// NewCommand returns the cloud-controller-manager command.
func NewCommand() *cobra.Command {
	cl, fss, err := newCommandLine()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	return cmapp.Command{
		Use:         name,
		Long:        long,
		Flags:       fss,
		Logs:        cl.Logs,
		FeatureGate: utilfeature.DefaultFeatureGate,
		Config: func() (*cmapp.Config, controllermanager.Registry, error) {
			c, err := newConfig(cl)
			return c, cloudcontrollers.Registry(), err
		},
	}.Cobra()
}

// Main runs the command and returns the process exit code: 0, or 1 with
// one line per problem on stderr.
func Main() int { return cmapp.Main(NewCommand()) }

// newConfig validates the command line and builds the Config Run works
// from.
func newConfig(cl *commandLine) (*cmapp.Config, error) {
	r := cloudcontrollers.Registry()
	var errs []error
	if err := cl.Validate(r.Names(), r.DisabledByDefault(), r.Aliases(), nil, nil); err != nil {
		errs = append(errs, err)
	}
	upstream, err := upstreamConfig(cl.CloudControllerManagerOptions, r)
	if err != nil {
		return nil, err
	}
	component := componentConfig(upstream)
	errs = append(errs, cmapp.ValidateGeneric(&component.Generic)...)
	errs = append(errs, validateCloud(component.KubeCloudShared.CloudProviderName, component.KubeCloudShared.CloudConfigFile)...)
	if err := utilerrors.Flatten(utilerrors.NewAggregate(errs)); err != nil {
		return nil, err
	}

	c, err := cmapp.NewConfig(name, component, cl.Master, cmapp.ServingOptions{
		SecureServing:  cl.SecureServing.SecureServingOptions,
		Authentication: cl.Authentication,
		Authorization:  cl.Authorization,
	})
	if err != nil {
		return nil, err
	}
	c.FeatureGate = utilfeature.DefaultFeatureGate
	if c.Cloud, err = cloudcontrollers.Init(component.KubeCloudShared.CloudProviderName, component.KubeCloudShared.CloudConfigFile); err != nil {
		return nil, err
	}
	c.ConfigzName = configzName
	if c.Configz, err = externalConfig(upstream); err != nil {
		return nil, err
	}
	return c, nil
}

// validateCloud refuses, naming the flag, what upstream's command
// stops on when it initializes the provider: no provider, one not compiled
// in (or "external"), a --cloud-config that cannot be read.
func validateCloud(provider, configFile string) []error {
	var errs []error
	if provider != "" && !cloudcontrollers.Active(provider) {
		errs = append(errs, fmt.Errorf("--cloud-provider=%s: no such cloud provider is compiled into this cloud-controller-manager", provider))
	}
	if configFile != "" {
		if f, err := os.Open(configFile); err != nil {
			errs = append(errs, fmt.Errorf("--cloud-config=%s: %w", configFile, err))
		} else {
			f.Close()
		}
	}
	return errs
}

// upstreamConfig fills upstream's configuration type from the options,
// with upstream's own ApplyTo methods (all plain copies; the process-level
// parts, clients and serving, are built by cmapp.NewConfig instead).
func upstreamConfig(o *options.CloudControllerManagerOptions, r controllermanager.Registry) (*ccmconfig.CloudControllerManagerConfiguration, error) {
	c := &ccmconfig.CloudControllerManagerConfiguration{}
	for _, apply := range []func() error{
		func() error { return o.Generic.ApplyTo(&c.Generic, r.Names(), r.DisabledByDefault(), r.Aliases()) },
		func() error { return o.KubeCloudShared.ApplyTo(&c.KubeCloudShared) },
		func() error { return o.ServiceController.ApplyTo(&c.ServiceController) },
		func() error { return o.NodeController.ApplyTo(&c.NodeController) },
		func() error { return o.NodeLifecycleController.ApplyTo(&c.NodeLifecycleController) },
		func() error { return o.Webhook.ApplyTo(&c.Webhook) },
	} {
		if err := apply(); err != nil {
			return nil, err
		}
	}
	c.NodeStatusUpdateFrequency = o.NodeStatusUpdateFrequency
	return c, nil
}
