package app

import (
	"fmt"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/server"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/featuregate"
	netutils "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// Config is the validated, completed configuration Run works from.
type Config struct {
	// Name is the command's name ("kube-controller-manager",
	// "cloud-controller-manager"): the user agent of the process's own
	// client, the source of its Events, its informers' name.
	Name string
	// ConfigzName and Configz are the /configz section and what it shows
	// (each command publishes its upstream configuration type).
	ConfigzName string
	Configz     runtime.Object

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
	// Candidacy, when set, makes leader election coordinated by the
	// apiserver (NewCandidacy: kube-controller-manager with the
	// CoordinatedLeaderElection gate). cloud-controller-manager leaves it
	// nil: upstream's ignores the gate.
	Candidacy *Candidacy
	// UpstreamWriteTiming is ControllerContext's (kcm's hidden
	// --kcm-upstream-write-timing).
	UpstreamWriteTiming bool
	// WarmStandby builds the controllers and syncs their informers before
	// this instance leads, so it starts with warm caches once it takes
	// the Lease (kcm's hidden --kcm-warm-standby, on by default; see Run).
	WarmStandby bool
}

// ServingOptions are the HTTPS endpoint's flags, the same in both
// commands: --secure-port and its TLS settings, and the delegated
// authentication and authorization through the apiserver.
type ServingOptions struct {
	SecureServing  *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
}

// NewConfig builds the process-level part of a Config from validated
// flags: the serving certificate (self-signed, in memory, unless files are
// given), the root client config from --master, --kubeconfig and the client
// connection settings of component, the process's own client under name,
// and the HTTPS endpoint (none with --secure-port=0). The caller completes
// the rest (controllers, feature gate, cloud, /configz).
func NewConfig(name string, component config.ComponentConfig, master string, serving ServingOptions) (*Config, error) {
	if err := serving.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("error creating self-signed certificates: %w", err)
	}
	cc := component.Generic.ClientConnection
	kubeconfig, err := clientcmd.BuildConfigFromFlags(master, cc.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig=%s: %w", cc.Kubeconfig, err)
	}
	kubeconfig.DisableCompression = true
	kubeconfig.AcceptContentTypes = cc.AcceptContentTypes
	kubeconfig.ContentType = cc.ContentType
	kubeconfig.QPS = cc.QPS
	kubeconfig.Burst = int(cc.Burst)

	client, err := kubernetes.NewForConfig(restclient.AddUserAgent(kubeconfig, name))
	if err != nil {
		return nil, err
	}
	c := &Config{
		Name:                      name,
		Component:                 component,
		Kubeconfig:                kubeconfig,
		Client:                    client,
		ControllerShutdownTimeout: DefaultControllerShutdownTimeout,
	}
	if err := serving.SecureServing.ApplyTo(&c.SecureServing); err != nil {
		return nil, err
	}
	if serving.SecureServing.BindPort != 0 || serving.SecureServing.Listener != nil {
		if err := serving.Authentication.ApplyTo(&c.Authentication, c.SecureServing, nil); err != nil {
			return nil, err
		}
		if err := serving.Authorization.ApplyTo(&c.Authorization); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// DefaultControllerShutdownTimeout is upstream kube-controller-manager's
// --controller-shutdown-timeout; cloud-controller-manager, which has no
// such flag, waits as long.
const DefaultControllerShutdownTimeout = 10 * time.Second
