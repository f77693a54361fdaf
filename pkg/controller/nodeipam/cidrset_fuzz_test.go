package nodeipam

import (
	"errors"
	"math/big"
	"net"
	"testing"
)

// fuzzMaxBits bounds the node mask's length past the cluster mask, so that
// a set has at most 4096 blocks and an iteration stays fast.
const fuzzMaxBits = 12

// cidrModel is what a CIDRSet should hold, computed with big integers
// independently of the set's own arithmetic.
type cidrModel struct {
	width, clusterMask, nodeMask int
	base                         *big.Int
	used, reserved               []bool
	next                         int
}

func (m *cidrModel) inUse() int {
	n := 0
	for _, u := range m.used {
		if u {
			n++
		}
	}
	return n
}

// block is the address of block i.
func (m *cidrModel) block(i int) *big.Int {
	return new(big.Int).Add(m.base, new(big.Int).Lsh(big.NewInt(int64(i)), uint(m.width-m.nodeMask)))
}

// blocks returns the indexes of the blocks cidr overlaps; ok is false if
// it overlaps none.
func (m *cidrModel) blocks(cidr *net.IPNet) (first, last int, ok bool) {
	prefix, width := cidr.Mask.Size()
	if width != m.width {
		return 0, 0, false
	}
	lo := ipBig(cidr.IP, width)
	hi := new(big.Int).Add(lo, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width-prefix)), big.NewInt(1)))
	clusterHi := new(big.Int).Add(m.base, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width-m.clusterMask)), big.NewInt(1)))
	if hi.Cmp(m.base) < 0 || lo.Cmp(clusterHi) > 0 {
		return 0, 0, false
	}
	if lo.Cmp(m.base) < 0 {
		lo = m.base
	}
	if hi.Cmp(clusterHi) > 0 {
		hi = clusterHi
	}
	shift := uint(width - m.nodeMask)
	first = int(new(big.Int).Rsh(new(big.Int).Sub(lo, m.base), shift).Int64())
	last = int(new(big.Int).Rsh(new(big.Int).Sub(hi, m.base), shift).Int64())
	return first, last, true
}

// ipBig reads ip as an integer of width bits.
func ipBig(ip net.IP, width int) *big.Int {
	if width == 32 {
		return new(big.Int).SetBytes(ip.To4())
	}
	return new(big.Int).SetBytes(ip.To16())
}

// bigIP writes v as an IP of width bits.
func bigIP(v *big.Int, width int) net.IP {
	b := v.FillBytes(make([]byte, width/8))
	return net.IP(b)
}

// fuzzCIDR builds a CIDR of the set's family (or, when other, of the other
// one) from three bytes of data: its prefix length, and whether its
// address is a random one near the cluster's or anywhere.
func (m *cidrModel) fuzzCIDR(data []byte, other bool) *net.IPNet {
	width := m.width
	if other {
		width = 160 - width // 32 <-> 128
	}
	prefix := int(data[0]) % (width + 1)
	// Mostly prefixes around the node mask, which overlap a few blocks.
	if data[1]%4 != 0 && !other {
		prefix = max(0, min(width, m.nodeMask+int(data[1]%8)-4))
	}
	var addr *big.Int
	if other {
		addr = big.NewInt(int64(data[2]))
	} else {
		offset := new(big.Int).Lsh(big.NewInt(int64(data[2])), uint(max(0, width-m.nodeMask-4)))
		if data[1]%8 == 7 {
			offset.Neg(offset) // below the cluster CIDR
		}
		addr = new(big.Int).Add(m.base, offset)
		limit := new(big.Int).Lsh(big.NewInt(1), uint(width))
		addr.Mod(addr, limit)
	}
	mask := net.CIDRMask(prefix, width)
	return &net.IPNet{IP: bigIP(addr, width).Mask(mask), Mask: mask}
}

// FuzzCIDRSet runs a sequence of allocations, releases, occupations and
// reservations on a CIDR set and checks each against a model: allocation
// hands out the first free block round-robin from after the last one (as
// upstream's cidrset), inside the cluster CIDR, of the node mask, never
// one in use; it fails with ErrNoCIDRsRemaining exactly when the set is
// full; occupying and releasing affect exactly the blocks a CIDR overlaps
// (reserved ones stay used) and fail for a CIDR outside the cluster CIDR
// or of the other family; allocating then releasing a block returns the
// set to its prior state.
func FuzzCIDRSet(f *testing.F) {
	f.Add([]byte{10, 244, 0, 0}, uint8(16), uint8(8), false, []byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Add([]byte{127, 0, 0, 0}, uint8(30), uint8(2), false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0}, uint8(0), uint8(12), false, []byte{3, 0, 0, 0, 2, 9, 1, 0, 4, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 255}, uint8(32), uint8(0), false, []byte{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 0}, uint8(20), uint8(12), false, []byte{2, 32, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3})
	f.Add([]byte{0xfd, 0, 0, 0x10, 0x2, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(56), uint8(8), true, []byte{0, 0, 0, 0, 4, 0, 0, 0, 1, 64, 1, 5})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint8(116), uint8(12), true, []byte{0, 0, 0, 0, 3, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 0}, uint8(104), uint8(8), true, []byte{0, 0, 0, 0, 2, 7, 3, 0})
	f.Add([]byte{0x20, 0x01, 0xbe, 0xef}, uint8(0), uint8(12), true, []byte{5, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ipBytes []byte, maskBits, diff uint8, v6 bool, ops []byte) {
		width := 32
		if v6 {
			width = 128
		}
		ip := make(net.IP, width/8)
		copy(ip, ipBytes)
		clusterMask := int(maskBits) % (width + 1)
		nodeMask := clusterMask + int(diff)%(min(fuzzMaxBits, width-clusterMask)+1)
		mask := net.CIDRMask(clusterMask, width)
		cluster := &net.IPNet{IP: ip.Mask(mask), Mask: mask}

		s, err := NewCIDRSet(cluster, nodeMask)
		if err != nil {
			t.Fatalf("NewCIDRSet(%v, %d): %v", cluster, nodeMask, err)
		}
		defer forgetSetMetrics(s)
		m := &cidrModel{width: width, clusterMask: clusterMask, nodeMask: nodeMask, base: ipBig(cluster.IP, width)}
		m.used = make([]bool, 1<<(nodeMask-clusterMask))
		m.reserved = make([]bool, len(m.used))
		if s.Max() != len(m.used) {
			t.Fatalf("%v /%d: Max() = %d, want %d", cluster, nodeMask, s.Max(), len(m.used))
		}

		allocate := func() (*net.IPNet, int) {
			got, err := s.AllocateNext()
			if m.inUse() == len(m.used) {
				if !errors.Is(err, ErrNoCIDRsRemaining) {
					t.Fatalf("%v: full set: AllocateNext = %v, %v", cluster, got, err)
				}
				return nil, -1
			}
			if err != nil {
				t.Fatalf("%v: AllocateNext with %d of %d blocks in use: %v", cluster, m.inUse(), len(m.used), err)
			}
			i := m.next
			for m.used[i] {
				i = (i + 1) % len(m.used)
			}
			m.used[i], m.next = true, (i+1)%len(m.used)
			want := &net.IPNet{IP: bigIP(m.block(i), width), Mask: net.CIDRMask(nodeMask, width)}
			if got.String() != want.String() || !got.IP.Equal(want.IP) {
				t.Fatalf("%v /%d: AllocateNext = %v, want block %d, %v", cluster, nodeMask, got, i, want)
			}
			if ones, bits := got.Mask.Size(); ones != nodeMask || bits != width || !cluster.Contains(got.IP) {
				t.Fatalf("%v /%d: allocated %v, not a /%d inside the cluster CIDR", cluster, nodeMask, got, nodeMask)
			}
			return got, i
		}
		apply := func(op string, cidr *net.IPNet) {
			first, last, overlaps := m.blocks(cidr)
			var err error
			switch op {
			case "occupy":
				err = s.Occupy(cidr)
			case "reserve":
				err = s.Reserve(cidr)
			case "release":
				err = s.Release(cidr)
			}
			if !overlaps {
				if err == nil {
					t.Fatalf("%v: %s(%v) outside the cluster CIDR: no error", cluster, op, cidr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v /%d: %s(%v) (blocks %d-%d): %v", cluster, nodeMask, op, cidr, first, last, err)
			}
			for i := first; i <= last; i++ {
				switch op {
				case "reserve":
					m.reserved[i] = true
					m.used[i] = true
				case "occupy":
					m.used[i] = true
				case "release":
					m.used[i] = m.reserved[i]
				}
			}
		}

		for len(ops) >= 4 {
			op, arg := ops[0], ops[1:4]
			ops = ops[4:]
			switch op % 6 {
			case 0, 1:
				allocate()
			case 2:
				apply("occupy", m.fuzzCIDR(arg, false))
			case 3:
				apply("release", m.fuzzCIDR(arg, false))
			case 4:
				apply("reserve", m.fuzzCIDR(arg, op%12 == 10))
			case 5:
				// Allocate, then release: back where it was, but for
				// where the next search starts.
				used, inUse := append([]bool(nil), m.used...), s.InUse()
				got, i := allocate()
				if got == nil {
					break
				}
				if err := s.Release(got); err != nil {
					t.Fatalf("%v: Release(%v): %v", cluster, got, err)
				}
				m.used[i] = false
				for j := range used {
					if s.used.get(j) != used[j] {
						t.Fatalf("%v: allocating and releasing %v changed block %d", cluster, got, j)
					}
				}
				if s.InUse() != inUse {
					t.Fatalf("%v: allocating and releasing %v: %d in use, was %d", cluster, got, s.InUse(), inUse)
				}
			}
			if s.InUse() != m.inUse() {
				t.Fatalf("%v /%d: InUse() = %d, want %d", cluster, nodeMask, s.InUse(), m.inUse())
			}
			for i := range m.used {
				if s.used.get(i) != m.used[i] {
					t.Fatalf("%v /%d: block %d used = %v, want %v", cluster, nodeMask, i, s.used.get(i), m.used[i])
				}
			}
		}
	})
}

// forgetSetMetrics drops a set's metric series, which would otherwise
// pile up over millions of fuzzed cluster CIDRs.
func forgetSetMetrics(s *CIDRSet) {
	l := map[string]string{"clusterCIDR": s.label}
	cidrSetAllocations.Delete(l)
	cidrSetReleases.Delete(l)
	cidrSetMaxCIDRs.Delete(l)
	cidrSetUsage.Delete(l)
	cidrSetAllocationTries.Delete(l)
}

// FuzzNewCIDRSet checks the node mask size checks: a set is made exactly
// when the node mask is between the cluster CIDR's and the address width,
// and for IPv6 at most 16 bits longer than the cluster's
// (ErrSubNetTooBig), as upstream has it.
func FuzzNewCIDRSet(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0}, uint8(8), int(24), false)
	f.Add([]byte{10, 0, 0, 0}, uint8(24), int(16), false)
	f.Add([]byte{10, 0, 0, 0}, uint8(24), int(33), false)
	f.Add([]byte{0xfd}, uint8(48), int(64), true)
	f.Add([]byte{0xfd}, uint8(48), int(65), true)
	f.Add([]byte{0xfd}, uint8(120), int(129), true)
	f.Add([]byte{}, uint8(0), int(-1), true)
	f.Fuzz(func(t *testing.T, ipBytes []byte, maskBits uint8, nodeMask int, v6 bool) {
		width := 32
		if v6 {
			width = 128
		}
		ip := make(net.IP, width/8)
		copy(ip, ipBytes)
		clusterMask := int(maskBits) % (width + 1)
		mask := net.CIDRMask(clusterMask, width)
		cluster := &net.IPNet{IP: ip.Mask(mask), Mask: mask}
		s, err := NewCIDRSet(cluster, nodeMask)
		valid := nodeMask >= clusterMask && nodeMask <= width
		tooBig := valid && width == 128 && nodeMask-clusterMask > maxIPv6MaskDiff
		switch {
		case tooBig:
			if !errors.Is(err, ErrSubNetTooBig) {
				t.Fatalf("NewCIDRSet(%v, %d) = %v, want ErrSubNetTooBig", cluster, nodeMask, err)
			}
		case valid:
			if err != nil {
				t.Fatalf("NewCIDRSet(%v, %d): %v", cluster, nodeMask, err)
			}
			forgetSetMetrics(s)
			// The bitmap grows as blocks are used: even 2^32 blocks cost
			// nothing yet.
			if s.Max() != 1<<(nodeMask-clusterMask) || s.InUse() != 0 {
				t.Fatalf("NewCIDRSet(%v, %d): Max %d, InUse %d", cluster, nodeMask, s.Max(), s.InUse())
			}
		default:
			if err == nil {
				t.Fatalf("NewCIDRSet(%v, %d): no error", cluster, nodeMask)
			}
		}
	})
}
