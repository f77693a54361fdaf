package nodeipam

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// node returns a Node named name (its UID too) with the given podCIDRs.
func node(name string, podCIDRs ...string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}
	if len(podCIDRs) > 0 {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = podCIDRs[0], podCIDRs
	}
	return n
}

func mustAllocator(t *testing.T, cluster, service string, masks ...int32) *allocator {
	t.Helper()
	c, errs := ParseConfig(cfg(cluster, service, masks...))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	a, err := newAllocator(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func allocateStrings(t *testing.T, a *allocator, name string) []string {
	t.Helper()
	cidrs, err := a.allocate(name, types.UID(name))
	if err != nil {
		t.Fatalf("allocate %s: %v", name, err)
	}
	return cidrStrings(cidrs)
}

func TestServiceRangeIsNeverHandedOut(t *testing.T) {
	cases := []struct {
		cluster, service string
		want             []string
	}{
		// The service range at the start, inside, and beside the cluster CIDR.
		{"10.0.0.0/22", "10.0.0.0/24", []string{"10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"}},
		{"10.0.0.0/22", "10.0.1.128/25", []string{"10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"}},
		{"10.0.0.0/22", "10.96.0.0/12", []string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"}},
		// A dual-stack service range reserves in each family's CIDR.
		{"10.0.0.0/23,fd00::/63", "10.0.0.0/24,fd00::/108", []string{"10.0.1.0/24", "fd00:0:0:1::/64"}},
	}
	for _, tc := range cases {
		a := mustAllocator(t, tc.cluster, tc.service)
		var got []string
		for {
			cidrs, err := a.allocate("n", "n")
			if errors.Is(err, ErrNoCIDRsRemaining) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, cidrStrings(cidrs)...)
			a.confirm("n", "n")
			a.nodes = map[string]holding{} // keep the blocks, drop the record
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("cluster %s service %s: handed out %v, want %v", tc.cluster, tc.service, got, tc.want)
		}
	}
}

func TestServiceRangeHoldingTheClusterCIDR(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/16", "10.0.0.0/8")
	if _, err := a.allocate("n", "n"); !errors.Is(err, ErrNoCIDRsRemaining) {
		t.Errorf("err = %v, want ErrNoCIDRsRemaining", err)
	}
}

func TestDualStackAllocation(t *testing.T) {
	a := mustAllocator(t, "10.244.0.0/16,fd00:10:244::/56", "")
	if got := allocateStrings(t, a, "a"); !slices.Equal(got, []string{"10.244.0.0/24", "fd00:10:244::/64"}) {
		t.Errorf("a got %v", got)
	}
	if got := allocateStrings(t, a, "b"); !slices.Equal(got, []string{"10.244.1.0/24", "fd00:10:244:1::/64"}) {
		t.Errorf("b got %v", got)
	}
}

// When one family is full, the other's block is given back.
func TestDualStackExhaustionHandsOutNothing(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/24,fd00::/56", "", 0, 24, 64)
	allocateStrings(t, a, "a")
	if _, err := a.allocate("b", "b"); !errors.Is(err, ErrNoCIDRsRemaining) || !strings.Contains(err.Error(), "idx:0") {
		t.Fatalf("err = %v", err)
	}
	if n := a.sets[1].InUse(); n != 1 {
		t.Errorf("IPv6 blocks in use = %d, want 1", n)
	}
}

func TestObserveAndForget(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/22", "")
	// Nodes that already hold blocks (after a restart).
	if _, err := a.observe(node("a", "10.0.0.0/24")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.observe(node("b", "10.0.2.0/24")); err != nil {
		t.Fatal(err)
	}
	if got := allocateStrings(t, a, "c"); got[0] != "10.0.1.0/24" {
		t.Errorf("c got %v, want 10.0.1.0/24", got)
	}
	if got := allocateStrings(t, a, "d"); got[0] != "10.0.3.0/24" {
		t.Errorf("d got %v", got)
	}
	if _, err := a.allocate("e", "e"); !errors.Is(err, ErrNoCIDRsRemaining) {
		t.Fatalf("err = %v, want full", err)
	}
	if !a.forget("b") {
		t.Error("forget(b) released nothing")
	}
	if a.forget("b") {
		t.Error("forgetting twice released again")
	}
	if got := allocateStrings(t, a, "e"); got[0] != "10.0.2.0/24" {
		t.Errorf("e got %v, want b's 10.0.2.0/24", got)
	}
}

// A block two Nodes claim is free only once both are gone.
func TestSharedBlockNeedsAllHoldersGone(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/23", "")
	_, _ = a.observe(node("a", "10.0.0.0/24"))
	_, _ = a.observe(node("b", "10.0.0.0/24"))
	if a.forget("a") {
		t.Error("block released while b holds it")
	}
	if !a.forget("b") {
		t.Error("block not released after the last holder")
	}
	if a.sets[0].InUse() != 0 {
		t.Errorf("%d blocks in use", a.sets[0].InUse())
	}
}

func TestObserveReportsWhatItCannotHold(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/16", "")
	cases := []struct {
		node *v1.Node
		want string
	}{
		{node("garbage", "nope"), "failed to parse node garbage, CIDR nope"},
		{node("outside", "192.168.0.0/24"), "is out the range of cluster cidr 10.0.0.0/16"},
		{node("extra", "10.0.7.0/24", "fd00::/64"), "has an allocated cidr: fd00::/64 at index:1 that does not exist"},
	}
	for _, tc := range cases {
		_, err := a.observe(tc.node)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.node.Name, err, tc.want)
		}
	}
	// The good CIDR of "extra" is held all the same.
	if h, ok := a.lookup("extra"); !ok || h.cidrs[0].String() != "10.0.7.0/24" {
		t.Errorf("extra holds %+v", h)
	}
	if _, ok := a.lookup("garbage"); ok {
		t.Error("garbage holds something")
	}
}

// A Node that shows other CIDRs than it was handed gives those back.
func TestObserveReplacesAnUnconfirmedHolding(t *testing.T) {
	a := mustAllocator(t, "10.0.0.0/22", "")
	allocateStrings(t, a, "a") // 10.0.0.0/24, patch not confirmed
	released, err := a.observe(node("a", "10.0.3.0/24"))
	if err != nil || !released {
		t.Fatalf("released=%v err=%v", released, err)
	}
	if a.sets[0].InUse() != 1 {
		t.Errorf("%d blocks in use, want 1", a.sets[0].InUse())
	}
	h, _ := a.lookup("a")
	if !h.confirmed || !sameCIDR(h.cidrs[0], &net.IPNet{IP: net.IPv4(10, 0, 3, 0).To4(), Mask: net.CIDRMask(24, 32)}) {
		t.Errorf("holding %+v", h)
	}
}
