package options

import (
	"fmt"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"
	cmoptions "k8s.io/controller-manager/options"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// DefaultSecurePort is upstream's kube-controller-manager HTTPS port.
const DefaultSecurePort = 10257

// Options is everything the command line sets.
type Options struct {
	Component config.ComponentConfig
	// Generic binds the generic section (leader election, --controllers,
	// client connection, debugging) with k8s.io/controller-manager's code,
	// which upstream uses too.
	Generic *cmoptions.GenericControllerManagerConfigurationOptions

	SecureServing  *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
	Metrics        *metrics.Options
	Logs           *logsapi.LoggingConfiguration
	Globals        basecompatibility.ComponentGlobalsRegistry

	Master                    string
	ControllerShutdownTimeout time.Duration
	// UpstreamWriteTiming is kcm's hidden --kcm-upstream-write-timing.
	UpstreamWriteTiming bool
	// WarmStandby is kcm's hidden --kcm-warm-standby.
	WarmStandby bool

	registry controllermanager.Registry
}

// New returns options holding upstream's defaults. globals carries the
// feature gate and emulated version (see pkg/features).
func New(registry controllermanager.Registry, globals basecompatibility.ComponentGlobalsRegistry) *Options {
	o := &Options{
		Component:                 DefaultComponentConfig(),
		SecureServing:             apiserveroptions.NewSecureServingOptions(),
		Authentication:            apiserveroptions.NewDelegatingAuthenticationOptions(),
		Authorization:             apiserveroptions.NewDelegatingAuthorizationOptions(),
		Metrics:                   metrics.NewOptions(),
		Logs:                      logs.NewOptions(),
		Globals:                   globals,
		ControllerShutdownTimeout: cmapp.DefaultControllerShutdownTimeout,
		WarmStandby:               true,
		registry:                  registry,
	}
	o.Generic = cmoptions.NewGenericControllerManagerConfigurationOptions(&o.Component.Generic)
	o.Authentication.RemoteKubeConfigFileOptional = true
	o.Authorization.RemoteKubeConfigFileOptional = true
	o.SecureServing.ServerCert.CertDirectory = ""
	o.SecureServing.ServerCert.PairName = "kube-controller-manager"
	o.SecureServing.BindPort = DefaultSecurePort
	return o
}

// Flags returns the named flag sets in upstream's order, which is the order
// of the sections in --help.
func (o *Options) Flags() cliflag.NamedFlagSets {
	fss := cliflag.NamedFlagSets{}
	r := o.registry
	o.Generic.AddFlags(&fss, r.Names(), r.DisabledByDefault(), r.Aliases())
	addKubeCloudSharedFlags(fss.FlagSet("generic"), &o.Component)
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	for _, g := range controllerFlagGroups() {
		g.add(fss.FlagSet(g.section), &o.Component)
	}
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))

	misc := fss.FlagSet("misc")
	misc.StringVar(&o.Master, "master", o.Master, "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	misc.StringVar(&o.Component.Generic.ClientConnection.Kubeconfig, "kubeconfig", o.Component.Generic.ClientConnection.Kubeconfig, "Path to kubeconfig file with authorization and master location information (the master location can be overridden by the master flag).")

	fss.FlagSet("generic").DurationVar(&o.ControllerShutdownTimeout, "controller-shutdown-timeout", o.ControllerShutdownTimeout, "Time to wait for the controllers to shut down before terminating the executable")
	o.Globals.AddFlags(fss.FlagSet("generic"))

	// kcm's flags of its own, hidden from --help so that it lists
	// upstream's flags only. --kcm-upstream-write-timing is a diagnostic
	// that answers whether a difference from upstream comes from an
	// algorithm or from kcm's write pacing (docs/ARCHITECTURE.md, "Write
	// policies"); --kcm-warm-standby=false makes a standby as upstream's,
	// which starts its informers only once it leads.
	misc.BoolVar(&o.UpstreamWriteTiming, "kcm-upstream-write-timing", false, "kcm only: write when upstream would, without kcm's status and endpoint write spacing and DaemonSet turns.")
	_ = misc.MarkHidden("kcm-upstream-write-timing")
	misc.BoolVar(&o.WarmStandby, "kcm-warm-standby", o.WarmStandby, "kcm only: while another instance leads, build the controllers and keep their informers synced, so that this one starts with warm caches when it takes the Lease.")
	_ = misc.MarkHidden("kcm-warm-standby")
	return fss
}

// Validate checks every option and returns all problems, one per line.
func (o *Options) Validate() error {
	var errs []error
	r := o.Registry()
	if err := o.Globals.SetFallback(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Globals.Validate()...)
	errs = append(errs, o.Generic.Validate(r.Names(), r.DisabledByDefault(), r.Aliases())...)
	errs = append(errs, o.validateGeneric()...)
	for _, g := range controllerFlagGroups() {
		if g.validate != nil {
			errs = append(errs, g.validate(&o.Component)...)
		}
	}
	errs = append(errs, validateNetwork(&o.Component)...)
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	errs = append(errs, o.validateServingFiles()...)
	return utilerrors.NewAggregate(errs)
}

// validateGeneric adds to the checks both commands make
// (cmapp.ValidateGeneric) those of kube-controller-manager's own flags.
func (o *Options) validateGeneric() []error {
	errs := cmapp.ValidateGeneric(&o.Component.Generic)
	if o.ControllerShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("--controller-shutdown-timeout=%s: must not be negative", o.ControllerShutdownTimeout))
	}
	if p := o.Component.KubeCloudShared.CloudProviderName; p != "" && p != "external" && !cloudcontrollers.Active(p) {
		errs = append(errs, fmt.Errorf("--cloud-provider=%s: built-in cloud providers are disabled; set --cloud-provider=external and run an external cloud controller manager", p))
	}
	return errs
}

func (o *Options) validateServingFiles() []error {
	var errs []error
	if err := checkCertFile("client-ca-file", o.Authentication.ClientCert.ClientCA); err != nil {
		errs = append(errs, err)
	}
	if err := checkCertFile("requestheader-client-ca-file", o.Authentication.RequestHeader.ClientCAFile); err != nil {
		errs = append(errs, err)
	}
	if err := checkCertFile("tls-cert-file", o.SecureServing.ServerCert.CertKey.CertFile); err != nil {
		errs = append(errs, err)
	}
	if err := checkKeyFile("tls-private-key-file", o.SecureServing.ServerCert.CertKey.KeyFile); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Registry returns the controller registry the options were built with,
// plus the cloud controllers when --cloud-provider names a registered
// provider (pkg/cloudcontrollers). Without one, it is upstream's.
func (o *Options) Registry() controllermanager.Registry {
	if cloudcontrollers.Active(o.Component.KubeCloudShared.CloudProviderName) {
		return cloudcontrollers.With(o.registry)
	}
	return o.registry
}
