package app

import (
	"fmt"
	"net"
	"time"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/featuregate"
	netutils "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// userAgent is upstream's user agent for the process-level client.
const userAgent = "kube-controller-manager"

// Config is the validated, completed configuration Run works from.
type Config struct {
	Component config.ComponentConfig
	// Kubeconfig is the root client config (--kubeconfig, --master, QPS,
	// burst, content type); per-controller clients derive from it.
	Kubeconfig *restclient.Config
	// Client is the process's own client (leader election, waiting for the
	// apiserver, TokenRequests for per-controller credentials).
	Client kubernetes.Interface

	SecureServing  *server.SecureServingInfo
	Authentication server.AuthenticationInfo
	Authorization  server.AuthorizationInfo

	FeatureGate               featuregate.FeatureGate
	ControllerShutdownTimeout time.Duration
	// Cloud is the provider --cloud-provider names, nil without one.
	Cloud cloudprovider.Interface
}

// newConfig validates o and builds a Config.
func newConfig(o *options.Options) (*Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("error creating self-signed certificates: %w", err)
	}
	cc := o.Component.Generic.ClientConnection
	kubeconfig, err := clientcmd.BuildConfigFromFlags(o.Master, cc.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig=%s: %w", cc.Kubeconfig, err)
	}
	kubeconfig.DisableCompression = true
	kubeconfig.AcceptContentTypes = cc.AcceptContentTypes
	kubeconfig.ContentType = cc.ContentType
	kubeconfig.QPS = cc.QPS
	kubeconfig.Burst = int(cc.Burst)

	client, err := kubernetes.NewForConfig(restclient.AddUserAgent(kubeconfig, userAgent))
	if err != nil {
		return nil, err
	}
	c := &Config{
		Component:                 o.Component,
		Kubeconfig:                kubeconfig,
		Client:                    client,
		FeatureGate:               o.Globals.FeatureGateFor("kube"),
		ControllerShutdownTimeout: o.ControllerShutdownTimeout,
	}
	r := o.Registry()
	if err := o.Generic.ApplyTo(&c.Component.Generic, r.Names(), r.DisabledByDefault(), r.Aliases()); err != nil {
		return nil, err
	}
	if err := o.SecureServing.ApplyTo(&c.SecureServing); err != nil {
		return nil, err
	}
	if o.SecureServing.BindPort != 0 || o.SecureServing.Listener != nil {
		if err := o.Authentication.ApplyTo(&c.Authentication, c.SecureServing, nil); err != nil {
			return nil, err
		}
		if err := o.Authorization.ApplyTo(&c.Authorization); err != nil {
			return nil, err
		}
	}
	shared := c.Component.KubeCloudShared
	if c.Cloud, err = cloudcontrollers.Init(shared.CloudProviderName, shared.CloudConfigFile); err != nil {
		return nil, err
	}
	o.Metrics.Apply()
	return c, nil
}
