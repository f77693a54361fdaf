// Package cloudcontrollers is the cloud group as both binaries run it:
// the names and aliases of upstream cloud-controller-manager's four
// controllers (verbatim from k8s.io/cloud-provider/names), their registry
// entries, and the provider's set-up for one leadership term. Providers
// plug in through k8s.io/cloud-provider's RegisterCloudProvider, so an
// out-of-tree provider is compiled in with a blank import.
//
// kube-controller-manager adds this registry to its own only when
// --cloud-provider names a registered provider (upstream v1.37 accepts no
// provider but "external" and has none of these controllers; kcm keeps
// that refusal for any other name); the group then joins --controllers,
// enabled by default. cloud-controller-manager runs this registry alone.
//
// At the start of each leadership term the provider is built from
// --cloud-config, initialized and given the shared informers, with
// upstream cloud-controller-manager's ClusterID check
// (--allow-untagged-cloud). The controllers use the provider's Interface
// only; pkg/cloudprovider/local is the provider built in. Each
// controller's differences from upstream are in its own package doc
// (servicelb, cloudnode, noderoute, cloudnodelifecycle under
// pkg/controller).
package cloudcontrollers
