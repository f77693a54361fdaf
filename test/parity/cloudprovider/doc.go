// Package cloudprovider is the "parity" cloud provider: a deterministic
// k8s.io/cloud-provider Interface compiled into both sides of the cloud
// parity scenarios (upstream's cloud-controller-manager built in
// hack/tools/ccm, and kcm), so that what the cloud controllers do is the
// only thing that differs. A blank import registers it.
//
// Everything it answers is derived from the objects the controllers pass
// in, so a scenario controls it through the API:
//
//   - LoadBalancer: the address is derived from the Service's namespace and
//     name inside the configured CIDR (default 203.0.113.0/24), the hostname
//     is <name>.<namespace>.lb.parity.test; annotation
//     parity.kcm.dev/ip-mode sets the ingress ipMode, parity.kcm.dev/lb-error
//     makes EnsureLoadBalancer and UpdateLoadBalancer fail with its value.
//   - InstancesV2: provider ID parity://<node name> (or the node's own),
//     instance type, zone and region from the annotations
//     parity.kcm.dev/instance-type, parity.kcm.dev/zone,
//     parity.kcm.dev/region (defaults parity.small, zone-a, region-1),
//     addresses from parity.kcm.dev/addresses ("InternalIP=10.0.0.1,
//     Hostname=n1"; default: the node's own), additional labels from
//     parity.kcm.dev/additional-labels ("k1=v1,k2=v2"). An instance is
//     gone while the Node carries the annotation
//     parity.kcm.dev/instance-gone, shut down while it carries
//     parity.kcm.dev/instance-shutdown.
//   - Routes: the route table; parity.kcm.dev/route-error on the target
//     Node makes CreateRoute fail with its value.
//
// The cloud's state is kept in the ConfigMaps
// kube-system/parity-cloud-loadbalancers and kube-system/parity-cloud-routes,
// written through the client the controller manager gives the provider, so
// a scenario captures it and it survives a controller-manager restart as a
// cloud's would: per load balancer (key <namespace>_<name>) the nodes and
// ports it was last given, "nodes=n1,n2 ports=http:TCP/80"; per route (key
// <node>_<CIDR with . and : as - and / as _>, e.g. n1_10-244-0-0_24)
// "<node> <CIDR>". Without a client (no Initialize) it is kept in memory.
//
// cloud-config (YAML): loadBalancerCIDR: 203.0.113.0/24
package cloudprovider
