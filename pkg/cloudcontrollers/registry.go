package cloudcontrollers

import (
	"context"
	"fmt"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/controller/cloudnode"
	"github.com/kcm-dev/kcm/pkg/controller/cloudnodelifecycle"
	"github.com/kcm-dev/kcm/pkg/controller/noderoute"
	"github.com/kcm-dev/kcm/pkg/controller/servicelb"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// Canonical names of the cloud controllers.
const (
	CloudNode          = "cloud-node-controller"
	ServiceLB          = "service-lb-controller"
	NodeRoute          = "node-route-controller"
	CloudNodeLifecycle = "cloud-node-lifecycle-controller"
)

// Aliases maps each legacy short name to its canonical name.
func Aliases() map[string]string {
	return map[string]string{
		"cloud-node":           CloudNode,
		"service":              ServiceLB,
		"route":                NodeRoute,
		"cloud-node-lifecycle": CloudNodeLifecycle,
	}
}

// Registry returns the cloud controllers, all enabled by default as in
// upstream's cloud-controller-manager.
func Registry() controllermanager.Registry {
	aliases := map[string][]string{}
	for alias, name := range Aliases() {
		aliases[name] = append(aliases[name], alias)
	}
	r := controllermanager.Registry{}
	// Upstream's cloud controllers report themselves in
	// running_managed_controllers under their legacy short names.
	add := func(name string, ctor controllermanager.Constructor) {
		r[name] = &controllermanager.Descriptor{Name: name, Aliases: aliases[name], New: ctor, RunningMetric: aliases[name][0]}
	}
	add(ServiceLB, servicelb.New)
	add(CloudNode, cloudnode.New)
	add(CloudNodeLifecycle, cloudnodelifecycle.New)
	add(NodeRoute, noderoute.New)
	return r
}

// With returns base plus the cloud controllers.
func With(base controllermanager.Registry) controllermanager.Registry {
	r := controllermanager.Registry{}
	for n, d := range base {
		r[n] = d
	}
	for n, d := range Registry() {
		r[n] = d
	}
	return r
}

// Active reports whether --cloud-provider names a provider this binary
// has registered ("external" and "" name none).
func Active(provider string) bool {
	return provider != "" && !cloudprovider.IsExternal(provider) && cloudprovider.IsCloudProvider(provider)
}

// Init builds the provider --cloud-provider names from --cloud-config; nil
// when no provider is active.
func Init(provider, configFile string) (cloudprovider.Interface, error) {
	if !Active(provider) {
		return nil, nil
	}
	cloud, err := cloudprovider.InitCloudProvider(provider, configFile)
	if err != nil {
		return nil, fmt.Errorf("--cloud-provider=%s --cloud-config=%s: %w", provider, configFile, err)
	}
	if cloud == nil {
		return nil, fmt.Errorf("--cloud-provider=%s: the provider returned nothing", provider)
	}
	return cloud, nil
}

// Attach gives one leadership term's controller context the provider, as
// upstream's cloud-controller-manager does when it starts leading: the
// provider is initialized with the controllers' client builder and, if
// it wants them, gets the shared informers. A provider without a cluster
// ID is refused unless --allow-untagged-cloud, as upstream.
func Attach(ctx context.Context, cc *controllermanager.ControllerContext, cloud cloudprovider.Interface) error {
	if cloud == nil {
		return nil
	}
	if !cloud.HasClusterID() {
		if cc.Config == nil || !cc.Config.KubeCloudShared.AllowUntaggedCloud {
			return fmt.Errorf("no ClusterID found.  A ClusterID is required for the cloud provider to function properly.  This check can be bypassed by setting the allow-untagged-cloud option")
		}
		klog.FromContext(ctx).Info("detected a cluster without a ClusterID.  A ClusterID will be required in the future.  Please tag your cluster to avoid any future issues")
	}
	cloud.Initialize(cc.ClientBuilder, ctx.Done())
	if u, ok := cloud.(cloudprovider.InformerUser); ok {
		u.SetInformers(cc.InformerFactory)
	}
	cc.Cloud = cloud
	return nil
}
