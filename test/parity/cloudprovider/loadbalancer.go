package cloudprovider

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

type loadBalancers struct{ c *Cloud }

var _ cloudprovider.LoadBalancer = loadBalancers{}

// GetLoadBalancerName is <namespace>_<name>: a ConfigMap key, the same in
// every run (upstream's default is derived from the Service's UID).
func (lb loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *v1.Service) string {
	return svc.Namespace + "_" + svc.Name
}

func (lb loadBalancers) GetLoadBalancer(ctx context.Context, cluster string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	state, err := lb.c.lbs.read(ctx)
	if err != nil {
		return nil, false, err
	}
	if _, ok := state[lb.GetLoadBalancerName(ctx, cluster, svc)]; !ok {
		return nil, false, nil
	}
	return lb.status(svc), true, nil
}

func (lb loadBalancers) EnsureLoadBalancer(ctx context.Context, cluster string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	if err := lb.record(ctx, cluster, svc, nodes); err != nil {
		return nil, err
	}
	return lb.status(svc), nil
}

func (lb loadBalancers) UpdateLoadBalancer(ctx context.Context, cluster string, svc *v1.Service, nodes []*v1.Node) error {
	return lb.record(ctx, cluster, svc, nodes)
}

func (lb loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, cluster string, svc *v1.Service) error {
	name := lb.GetLoadBalancerName(ctx, cluster, svc)
	return lb.c.lbs.update(ctx, func(m map[string]string) { delete(m, name) })
}

func (lb loadBalancers) record(ctx context.Context, cluster string, svc *v1.Service, nodes []*v1.Node) error {
	if msg := svc.Annotations[AnnotationLBError]; msg != "" {
		return errors.New(msg)
	}
	// What the load balancer was last given: "nodes=n1,n2 ports=http:TCP/80".
	var ports, nodeNames []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s:%s/%d", p.Name, p.Protocol, p.Port))
	}
	for _, n := range nodes {
		nodeNames = append(nodeNames, n.Name)
	}
	sort.Strings(nodeNames)
	data := "nodes=" + strings.Join(nodeNames, ",") + " ports=" + strings.Join(ports, ",")
	name := lb.GetLoadBalancerName(ctx, cluster, svc)
	return lb.c.lbs.update(ctx, func(m map[string]string) { m[name] = data })
}

// status is the Service's address, derived from its namespace and name,
// and hostname.
func (lb loadBalancers) status(svc *v1.Service) *v1.LoadBalancerStatus {
	ing := v1.LoadBalancerIngress{
		IP:       lb.address(svc.Namespace + "/" + svc.Name).String(),
		Hostname: svc.Name + "." + svc.Namespace + ".lb.parity.test",
	}
	if m := svc.Annotations[AnnotationIPMode]; m != "" {
		mode := v1.LoadBalancerIPMode(m)
		ing.IPMode = &mode
	}
	return &v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{ing}}
}

// address picks a host address of the CIDR from key's hash (never the
// network's first or last).
func (lb loadBalancers) address(key string) netip.Addr {
	h := fnv.New64a()
	h.Write([]byte(key))
	base := lb.c.prefix.Addr().As16()
	hostBits := lb.c.prefix.Addr().BitLen() - lb.c.prefix.Bits()
	if hostBits > 32 {
		hostBits = 32
	}
	var offset uint32 = 1
	if hostBits >= 2 {
		size := uint64(1)<<hostBits - 2
		offset = uint32(h.Sum64()%size) + 1
	}
	tail := binary.BigEndian.Uint32(base[12:]) + offset
	binary.BigEndian.PutUint32(base[12:], tail)
	a := netip.AddrFrom16(base)
	if lb.c.prefix.Addr().Is4() {
		a = a.Unmap()
	}
	return a
}
