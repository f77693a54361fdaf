package servicecidr

import (
	"net/netip"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

func TestHandlersEnqueue(t *testing.T) {
	objs := []runtime.Object{
		serviceCIDR("kubernetes", "10.0.0.0/16", "fd00::/108"),
		serviceCIDR("small", "10.0.1.0/24"),
		serviceCIDR("apart", "192.168.0.0/24"),
	}
	tests := []struct {
		name string
		fire func(c *Controller)
		want []string
	}{
		{name: "ServiceCIDR added: it and what it overlaps", fire: func(c *Controller) {
			logger, _ := ktesting.NewTestContext(t)
			c.onServiceCIDRAdd(logger, serviceCIDR("new", "10.0.0.0/8"))
		}, want: []string{"kubernetes", "new", "small"}},
		{name: "ServiceCIDR updated", fire: func(c *Controller) { c.onServiceCIDRChange(serviceCIDR("apart", "192.168.0.0/24")) },
			want: []string{"apart"}},
		{name: "ServiceCIDR tombstone", fire: func(c *Controller) {
			c.onServiceCIDRChange(cache.DeletedFinalStateUnknown{Key: "apart", Obj: serviceCIDR("apart")})
		}, want: []string{"apart"}},
		{name: "allocated address: the ServiceCIDRs holding it", fire: func(c *Controller) {
			c.onIPAddress(ipAddress("10.0.1.7", IPAllocatorManager))
		}, want: []string{"kubernetes", "small"}},
		{name: "IPv6 address", fire: func(c *Controller) { c.onIPAddress(ipAddress("fd00::7", IPAllocatorManager)) },
			want: []string{"kubernetes"}},
		{name: "address of another manager", fire: func(c *Controller) { c.onIPAddress(ipAddress("10.0.1.7", "someone")) }},
		{name: "address tombstone", fire: func(c *Controller) {
			c.onIPAddress(cache.DeletedFinalStateUnknown{Key: "x", Obj: ipAddress("192.168.0.9", IPAllocatorManager)})
		}, want: []string{"apart"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, objs...)
			tc.fire(f.c)
			if got := f.queued(); !slices.Equal(got, tc.want) {
				t.Errorf("queued %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPrefixContains(t *testing.T) {
	tests := []struct {
		prefix, addr string
		want         bool
	}{
		{"10.0.0.0/24", "10.0.0.1", true},
		{"10.0.0.0/24", "10.0.0.0", false},
		{"10.0.0.0/24", "10.0.0.255", false},
		{"10.0.0.0/24", "10.0.1.1", false},
		{"10.0.0.0/31", "10.0.0.1", false},
		{"10.0.0.0/28", "10.0.0.15", false},
		{"10.0.0.0/28", "10.0.0.14", true},
		{"10.0.0.7/22", "10.0.3.255", false},
		{"fd00::/120", "fd00::ff", true},
		{"fd00::/120", "fd00::", false},
		{"10.0.0.0/24", "::ffff:10.0.0.1", false},
	}
	for _, tc := range tests {
		got := prefixContains(netip.MustParsePrefix(tc.prefix), netip.MustParseAddr(tc.addr))
		if got != tc.want {
			t.Errorf("prefixContains(%s, %s) = %v", tc.prefix, tc.addr, got)
		}
	}
}
