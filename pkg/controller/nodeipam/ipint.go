package nodeipam

import (
	"encoding/binary"
	"net"
)

// uint128 is an IP address as an unsigned integer. IPv4 addresses use the
// low 32 bits of lo only.
type uint128 struct{ hi, lo uint64 }

func (a uint128) or(b uint128) uint128  { return uint128{a.hi | b.hi, a.lo | b.lo} }
func (a uint128) xor(b uint128) uint128 { return uint128{a.hi ^ b.hi, a.lo ^ b.lo} }

// shl shifts left by n < 128 bits.
func (a uint128) shl(n int) uint128 {
	switch {
	case n == 0:
		return a
	case n >= 64:
		return uint128{hi: a.lo << (n - 64)}
	default:
		return uint128{hi: a.hi<<n | a.lo>>(64-n), lo: a.lo << n}
	}
}

// shr shifts right by n < 128 bits.
func (a uint128) shr(n int) uint128 {
	switch {
	case n == 0:
		return a
	case n >= 64:
		return uint128{lo: a.hi >> (n - 64)}
	default:
		return uint128{hi: a.hi >> n, lo: a.lo>>n | a.hi<<(64-n)}
	}
}

// hostBits returns the ones of the host part of a /prefix in an address of
// width bits.
func hostBits(prefix, width int) uint128 {
	if prefix >= width {
		return uint128{}
	}
	return uint128{hi: ^uint64(0), lo: ^uint64(0)}.shr(128 - (width - prefix))
}

// ipToInt converts ip to an integer of width 32 or 128. ok is false when ip
// is not of that family.
func ipToInt(ip net.IP, width int) (v uint128, ok bool) {
	if width == 32 {
		v4 := ip.To4()
		if v4 == nil {
			return uint128{}, false
		}
		return uint128{lo: uint64(binary.BigEndian.Uint32(v4))}, true
	}
	if ip.To4() != nil && len(ip) == net.IPv4len {
		return uint128{}, false
	}
	v6 := ip.To16()
	if v6 == nil {
		return uint128{}, false
	}
	return uint128{hi: binary.BigEndian.Uint64(v6[:8]), lo: binary.BigEndian.Uint64(v6[8:])}, true
}

// intToIP converts v back to an IP of width 32 or 128.
func intToIP(v uint128, width int) net.IP {
	if width == 32 {
		ip := make(net.IP, net.IPv4len)
		binary.BigEndian.PutUint32(ip, uint32(v.lo))
		return ip
	}
	ip := make(net.IP, net.IPv6len)
	binary.BigEndian.PutUint64(ip[:8], v.hi)
	binary.BigEndian.PutUint64(ip[8:], v.lo)
	return ip
}

// widthOf returns 32 for an IPv4 CIDR and 128 for an IPv6 one, by the
// length of its mask.
func widthOf(cidr *net.IPNet) int {
	_, bits := cidr.Mask.Size()
	return bits
}
