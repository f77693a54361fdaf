package nodeipam

import (
	"errors"
	"net"
	"slices"
	"testing"

	netutils "k8s.io/utils/net"
)

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	_, cidr, err := netutils.ParseCIDRSloppy(s)
	if err != nil {
		t.Fatalf("parsing %q: %v", s, err)
	}
	return cidr
}

func mustSet(t *testing.T, cluster string, nodeMask int) *CIDRSet {
	t.Helper()
	s, err := NewCIDRSet(mustCIDR(t, cluster), nodeMask)
	if err != nil {
		t.Fatalf("NewCIDRSet(%s, %d): %v", cluster, nodeMask, err)
	}
	return s
}

func allocateN(t *testing.T, s *CIDRSet, n int) []string {
	t.Helper()
	var got []string
	for range n {
		c, err := s.AllocateNext()
		if err != nil {
			t.Fatalf("AllocateNext after %v: %v", got, err)
		}
		got = append(got, c.String())
	}
	return got
}

// Upstream's allocation order: block 0, 1, 2, … of the cluster CIDR.
func TestAllocationOrder(t *testing.T) {
	cases := []struct {
		cluster  string
		nodeMask int
		want     []string
	}{
		{"10.244.0.0/16", 24, []string{"10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"}},
		{"127.0.0.0/8", 32, []string{"127.0.0.0/32", "127.0.0.1/32"}},
		{"2001:beef:1234:369b::/60", 64, []string{"2001:beef:1234:3690::/64", "2001:beef:1234:3691::/64"}},
		{"fd00:10:244::/56", 64, []string{"fd00:10:244::/64", "fd00:10:244:1::/64", "fd00:10:244:2::/64"}},
		{"fd00::/104", 120, []string{"fd00::/120", "fd00::100/120"}},
	}
	for _, tc := range cases {
		if got := allocateN(t, mustSet(t, tc.cluster, tc.nodeMask), len(tc.want)); !slices.Equal(got, tc.want) {
			t.Errorf("%s /%d: got %v, want %v", tc.cluster, tc.nodeMask, got, tc.want)
		}
	}
}

// Cases from upstream's TestIndexToCIDRBlock.
func TestBlock(t *testing.T) {
	cases := []struct {
		cluster  string
		nodeMask int
		index    int
		want     string
	}{
		{"127.123.3.0/16", 24, 0, "127.123.0.0/24"},
		{"127.123.0.0/16", 24, 15, "127.123.15.0/24"},
		{"192.168.5.219/28", 32, 5, "192.168.5.213/32"},
		{"2001:0db8:1234:3::/48", 64, 0, "2001:db8:1234::/64"},
		{"2001:0db8:1234::/48", 64, 15, "2001:db8:1234:f::/64"},
		{"2001:0db8:85a3::8a2e:0370:7334/50", 63, 6425, "2001:db8:85a3:3232::/63"},
		{"2001:0db8::/32", 48, 15, "2001:db8:f::/48"},
		{"2001:0db8:85a3::8a2e:0370:7334/32", 48, 6425, "2001:db8:1919::/48"},
		{"2001:0db8:1234:ff00::/56", 72, 15, "2001:db8:1234:ff00:f00::/72"},
		{"2001:0db8:1234:ff00::0370:7334/56", 72, 6425, "2001:db8:1234:ff19:1900::/72"},
		{"2001:0db8:1234:0:1234::/80", 96, 15, "2001:db8:1234:0:1234:f::/96"},
		{"2001:0db8:1234:ff00::0370:7334/80", 96, 6425, "2001:db8:1234:ff00:0:1919::/96"},
	}
	for _, tc := range cases {
		if got := mustSet(t, tc.cluster, tc.nodeMask).block(tc.index).String(); got != tc.want {
			t.Errorf("%s /%d block %d = %s, want %s", tc.cluster, tc.nodeMask, tc.index, got, tc.want)
		}
	}
}

func TestNewCIDRSetLimits(t *testing.T) {
	if _, err := NewCIDRSet(mustCIDR(t, "beef:1234::/32"), 49); !errors.Is(err, ErrSubNetTooBig) {
		t.Errorf("IPv6 /32 with /49: err = %v, want ErrSubNetTooBig", err)
	}
	if _, err := NewCIDRSet(mustCIDR(t, "beef:1234::/32"), 48); err != nil {
		t.Errorf("IPv6 /32 with /48: %v", err)
	}
	if _, err := NewCIDRSet(mustCIDR(t, "10.0.0.0/16"), 8); err == nil {
		t.Error("node mask shorter than the cluster's: want an error")
	}
	if s := mustSet(t, "10.0.0.0/8", 32); s.Max() != 1<<24 {
		t.Errorf("IPv4 /8 with /32: Max = %d, want %d", s.Max(), 1<<24)
	}
}

// Exhaustion, then release and round-robin reuse, as upstream's
// TestCIDRSetFullyAllocated and TestCIDRSet_AllocationOccupied.
func TestExhaustionAndRoundRobin(t *testing.T) {
	for _, cluster := range []string{"127.123.234.0/30", "beef:1234::/30"} {
		s := mustSet(t, cluster, 30)
		p := allocateN(t, s, 1)
		if _, err := s.AllocateNext(); !errors.Is(err, ErrNoCIDRsRemaining) {
			t.Fatalf("%s: full set: err = %v, want ErrNoCIDRsRemaining", cluster, err)
		}
		if err := s.Release(mustCIDR(t, p[0])); err != nil {
			t.Fatal(err)
		}
		if again := allocateN(t, s, 1); again[0] != p[0] {
			t.Errorf("%s: after release got %s, want %s", cluster, again[0], p[0])
		}
	}

	s := mustSet(t, "10.0.0.0/22", 24)
	got := allocateN(t, s, 3) // .0 .1 .2
	_ = s.Release(mustCIDR(t, got[0]))
	// The next candidate is after the last one handed out, not the freed one.
	if next := allocateN(t, s, 2); !slices.Equal(next, []string{"10.0.3.0/24", "10.0.0.0/24"}) {
		t.Errorf("round robin: got %v", next)
	}
	if _, err := s.AllocateNext(); !errors.Is(err, ErrNoCIDRsRemaining) {
		t.Errorf("err = %v, want ErrNoCIDRsRemaining", err)
	}
}

// Cases from upstream's TestOccupy: the blocks a CIDR covers.
func TestOccupyRange(t *testing.T) {
	cases := []struct {
		cluster     string
		nodeMask    int
		cidr        string
		first, last int
	}{
		{"127.0.0.0/8", 16, "127.0.0.0/8", 0, 255},
		{"2001:beef:1200::/40", 48, "2001:beef:1200::/40", 0, 255},
		{"127.0.0.0/8", 16, "127.0.0.0/2", 0, 255},
		{"2001:beef:1200::/40", 48, "2001:beef:1234::/34", 0, 255},
		{"127.0.0.0/8", 16, "127.0.0.0/16", 0, 0},
		{"127.0.0.0/8", 32, "127.0.0.0/16", 0, 65535},
		{"2001:beef:1200::/48", 64, "2001:beef:1200::/48", 0, 65535},
		{"127.0.0.0/7", 16, "127.0.0.0/15", 256, 257},
		{"2001:beef:7f00::/39", 48, "2001:beef:7f00::/47", 256, 257},
		{"127.0.0.0/7", 15, "127.0.0.0/15", 128, 128},
		{"127.0.0.0/7", 18, "127.0.0.0/15", 1024, 1031},
		{"2001:beef:7f00::/39", 50, "2001:beef:7f00::/47", 1024, 1031},
		{"10.0.0.0/16", 24, "10.0.5.16/28", 5, 5},
	}
	for _, tc := range cases {
		s := mustSet(t, tc.cluster, tc.nodeMask)
		if err := s.Occupy(mustCIDR(t, tc.cidr)); err != nil {
			t.Errorf("%s /%d Occupy(%s): %v", tc.cluster, tc.nodeMask, tc.cidr, err)
			continue
		}
		want := tc.last - tc.first + 1
		if s.InUse() != want || s.used.count() != want || !s.used.get(tc.first) || !s.used.get(tc.last) {
			t.Errorf("%s /%d Occupy(%s): %d in use, want blocks %d..%d", tc.cluster, tc.nodeMask, tc.cidr, s.InUse(), tc.first, tc.last)
		}
		// Occupying twice counts once; releasing frees all.
		_ = s.Occupy(mustCIDR(t, tc.cidr))
		if s.InUse() != want {
			t.Errorf("double occupy: %d in use, want %d", s.InUse(), want)
		}
		_ = s.Release(mustCIDR(t, tc.cidr))
		if s.InUse() != 0 || s.used.count() != 0 {
			t.Errorf("after release: %d in use", s.InUse())
		}
	}
}

func TestOutOfRange(t *testing.T) {
	s := mustSet(t, "10.0.0.0/16", 24)
	for _, c := range []string{"10.1.0.0/24", "192.168.0.0/16", "fd00::/64"} {
		if err := s.Occupy(mustCIDR(t, c)); err == nil {
			t.Errorf("Occupy(%s): want an error", c)
		}
		if err := s.Release(mustCIDR(t, c)); err == nil {
			t.Errorf("Release(%s): want an error", c)
		}
	}
}

func TestReservedBlocksStayUsed(t *testing.T) {
	s := mustSet(t, "10.0.0.0/22", 24)
	if err := s.Reserve(mustCIDR(t, "10.0.1.0/24")); err != nil {
		t.Fatal(err)
	}
	if got := allocateN(t, s, 3); !slices.Equal(got, []string{"10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"}) {
		t.Errorf("got %v", got)
	}
	_ = s.Release(mustCIDR(t, "10.0.0.0/23"))
	if s.InUse() != 3 {
		t.Errorf("after releasing 10.0.0.0/23: %d in use, want 3 (the reserved block stays)", s.InUse())
	}
}

func TestLargeSetIsSparse(t *testing.T) {
	s := mustSet(t, "0.0.0.0/0", 32)
	got := allocateN(t, s, 2)
	if !slices.Equal(got, []string{"0.0.0.0/32", "0.0.0.1/32"}) {
		t.Errorf("got %v", got)
	}
	if len(s.used) != 1 {
		t.Errorf("bitmap has %d words, want 1", len(s.used))
	}
}
