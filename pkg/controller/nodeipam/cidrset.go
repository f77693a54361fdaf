package nodeipam

import (
	"errors"
	"fmt"
	"math/bits"
	"net"
)

// maxIPv6MaskDiff is how many bits longer than the cluster CIDR's mask an
// IPv6 node mask may be: upstream keeps the bitmap uncompressed and limits
// it to 2^16 blocks for IPv6 (IPv4 has no such limit).
const maxIPv6MaskDiff = 16

var (
	// ErrNoCIDRsRemaining is upstream's error when a cluster CIDR is full.
	ErrNoCIDRsRemaining = errors.New("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")
	// ErrSubNetTooBig is upstream's error for an IPv6 node mask more than
	// 16 bits longer than its cluster CIDR's.
	ErrSubNetTooBig = errors.New("New CIDR set failed; the node CIDR size is too big")
)

// CIDRSet hands out the /nodeMaskSize blocks of one cluster CIDR. Block i
// is the cluster CIDR's address with i in the bits between the two masks;
// a bitmap marks the blocks in use. Blocks are handed out round-robin from
// just after the last one handed out, as upstream's cidrset does.
//
// A CIDRSet is not safe for concurrent use; the allocator serializes it.
type CIDRSet struct {
	cluster      *net.IPNet
	base         uint128
	width        int // 32 or 128
	clusterMask  int
	nodeMaskSize int
	nodeMask     net.IPMask
	max          int

	used     bitmap
	reserved bitmap // blocks of the service ranges, never released
	inUse    int
	next     int
	label    string // the cluster CIDR, labelling the metrics
}

// NewCIDRSet returns an empty set of the /nodeMaskSize blocks of cluster.
func NewCIDRSet(cluster *net.IPNet, nodeMaskSize int) (*CIDRSet, error) {
	clusterMask, width := cluster.Mask.Size()
	if width != 32 && width != 128 {
		return nil, fmt.Errorf("cluster CIDR %v has a non-canonical mask", cluster)
	}
	base, ok := ipToInt(cluster.IP.Mask(cluster.Mask), width)
	if !ok {
		return nil, fmt.Errorf("cluster CIDR %v: address and mask are of different IP families", cluster)
	}
	if nodeMaskSize < clusterMask || nodeMaskSize > width {
		return nil, fmt.Errorf("node mask size %d must be between the cluster CIDR's %d and %d", nodeMaskSize, clusterMask, width)
	}
	if width == 128 && nodeMaskSize-clusterMask > maxIPv6MaskDiff {
		return nil, ErrSubNetTooBig
	}
	registerMetrics()
	s := &CIDRSet{
		cluster:      cluster,
		base:         base,
		width:        width,
		clusterMask:  clusterMask,
		nodeMaskSize: nodeMaskSize,
		nodeMask:     net.CIDRMask(nodeMaskSize, width),
		max:          1 << (nodeMaskSize - clusterMask),
		label:        cluster.String(),
	}
	cidrSetMaxCIDRs.WithLabelValues(s.label).Set(float64(s.max))
	return s, nil
}

// Max returns how many blocks the set holds.
func (s *CIDRSet) Max() int { return s.max }

// InUse returns how many blocks are allocated, occupied or reserved.
func (s *CIDRSet) InUse() int { return s.inUse }

// AllocateNext marks the next free block as used and returns it.
func (s *CIDRSet) AllocateNext() (*net.IPNet, error) {
	if s.inUse >= s.max {
		return nil, ErrNoCIDRsRemaining
	}
	i, tries := s.next, 0
	for ; s.used.get(i); tries++ {
		if tries == s.max {
			return nil, ErrNoCIDRsRemaining
		}
		i = (i + 1) % s.max
	}
	s.next = (i + 1) % s.max
	s.used.set(i)
	s.inUse++
	cidrSetAllocations.WithLabelValues(s.label).Inc()
	cidrSetAllocationTries.WithLabelValues(s.label).Observe(float64(tries))
	s.updateUsage()
	return s.block(i), nil
}

// Occupy marks every block that overlaps cidr as used. Occupying a used
// block is fine.
func (s *CIDRSet) Occupy(cidr *net.IPNet) error {
	first, last, err := s.indexRange(cidr)
	if err != nil {
		return err
	}
	n := 0
	for i := first; i <= last; i++ {
		if !s.used.get(i) {
			s.used.set(i)
			n++
		}
	}
	s.inUse += n
	cidrSetAllocations.WithLabelValues(s.label).Add(float64(n))
	s.updateUsage()
	return nil
}

// Reserve occupies cidr for good: Release leaves its blocks used. It keeps
// a service range out of reach even when a Node held a block inside it.
func (s *CIDRSet) Reserve(cidr *net.IPNet) error {
	first, last, err := s.indexRange(cidr)
	if err != nil {
		return err
	}
	for i := first; i <= last; i++ {
		s.reserved.set(i)
	}
	return s.Occupy(cidr)
}

// Release marks every block that overlaps cidr as free, except reserved
// ones. Releasing a free block is fine.
func (s *CIDRSet) Release(cidr *net.IPNet) error {
	first, last, err := s.indexRange(cidr)
	if err != nil {
		return err
	}
	n := 0
	for i := first; i <= last; i++ {
		if s.used.get(i) && !s.reserved.get(i) {
			s.used.clear(i)
			n++
		}
	}
	s.inUse -= n
	cidrSetReleases.WithLabelValues(s.label).Add(float64(n))
	s.updateUsage()
	return nil
}

func (s *CIDRSet) updateUsage() {
	cidrSetUsage.WithLabelValues(s.label).Set(float64(s.inUse) / float64(s.max))
}

// Overlaps reports whether cidr and the cluster CIDR share an address.
func (s *CIDRSet) Overlaps(cidr *net.IPNet) bool {
	if cidr == nil || widthOf(cidr) != s.width {
		return false
	}
	return s.cluster.Contains(cidr.IP.Mask(s.cluster.Mask)) || cidr.Contains(s.cluster.IP.Mask(cidr.Mask))
}

// block returns the i-th block.
func (s *CIDRSet) block(i int) *net.IPNet {
	ip := s.base.or(uint128{lo: uint64(i)}.shl(s.width - s.nodeMaskSize))
	return &net.IPNet{IP: intToIP(ip, s.width), Mask: s.nodeMask}
}

// indexRange returns the first and last index of the blocks cidr overlaps:
// all of them when cidr holds the cluster CIDR.
func (s *CIDRSet) indexRange(cidr *net.IPNet) (first, last int, err error) {
	if !s.Overlaps(cidr) {
		return -1, -1, fmt.Errorf("cidr %v is out the range of cluster cidr %v", cidr, s.cluster)
	}
	prefix, _ := cidr.Mask.Size()
	if prefix <= s.clusterMask {
		return 0, s.max - 1, nil
	}
	ip, _ := ipToInt(cidr.IP, s.width)
	if first, err = s.indexOf(ip); err != nil {
		return -1, -1, err
	}
	if last, err = s.indexOf(ip.or(hostBits(prefix, s.width))); err != nil {
		return -1, -1, err
	}
	return first, last, nil
}

// indexOf returns the index of the block holding ip.
func (s *CIDRSet) indexOf(ip uint128) (int, error) {
	i := s.base.xor(ip).shr(s.width - s.nodeMaskSize)
	if i.hi != 0 || i.lo >= uint64(s.max) {
		return 0, fmt.Errorf("CIDR: %v/%v is out of the range of CIDR allocator", intToIP(ip, s.width), s.nodeMaskSize)
	}
	return int(i.lo), nil
}

// bitmap is a growable set of non-negative integers; bits past its end are
// clear, so a large, mostly empty cluster CIDR costs little memory.
type bitmap []uint64

func (b bitmap) get(i int) bool {
	w := i / 64
	return w < len(b) && b[w]&(1<<(i%64)) != 0
}

func (b *bitmap) set(i int) {
	w := i / 64
	if w >= len(*b) {
		grown := make(bitmap, w+1, max(w+1, 2*len(*b)))
		copy(grown, *b)
		*b = grown
	}
	(*b)[w] |= 1 << (i % 64)
}

func (b bitmap) clear(i int) {
	if w := i / 64; w < len(b) {
		b[w] &^= 1 << (i % 64)
	}
}

// count returns the number of set bits (for tests).
func (b bitmap) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
