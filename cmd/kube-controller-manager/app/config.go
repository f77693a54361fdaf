package app

import (
	"k8s.io/component-base/featuregate"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	cmapp "github.com/kcm-dev/kcm/pkg/controllermanager/app"
)

// configzName is upstream's /configz section name.
const configzName = "kubecontrollermanager.config.k8s.io"

// newConfig validates o and builds the Config Run works from.
func newConfig(o *options.Options) (*cmapp.Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	component := o.Component
	r := o.Registry()
	if err := o.Generic.ApplyTo(&component.Generic, r.Names(), r.DisabledByDefault(), r.Aliases()); err != nil {
		return nil, err
	}
	c, err := cmapp.NewConfig(name, component, o.Master, cmapp.ServingOptions{
		SecureServing: o.SecureServing, Authentication: o.Authentication, Authorization: o.Authorization,
	})
	if err != nil {
		return nil, err
	}
	c.FeatureGate = o.Globals.FeatureGateFor("kube")
	if c.Candidacy, err = cmapp.NewCandidacy(c.FeatureGate, o.Globals.EffectiveVersionFor("kube")); err != nil {
		return nil, err
	}
	c.ControllerShutdownTimeout = o.ControllerShutdownTimeout
	c.UpstreamWriteTiming = o.UpstreamWriteTiming
	c.WarmStandby = o.WarmStandby
	shared := c.Component.KubeCloudShared
	if c.Cloud, err = cloudcontrollers.Init(shared.CloudProviderName, shared.CloudConfigFile); err != nil {
		return nil, err
	}
	c.ConfigzName = configzName
	if c.Configz, err = externalConfig(&c.Component); err != nil {
		return nil, err
	}
	o.Metrics.Apply()
	// As upstream's command: kubernetes_feature_enabled, one series per
	// gate, and version_info.
	if fg, ok := c.FeatureGate.(featuregate.MutableFeatureGate); ok {
		fg.AddMetrics()
	}
	o.Globals.AddMetrics()
	return c, nil
}
