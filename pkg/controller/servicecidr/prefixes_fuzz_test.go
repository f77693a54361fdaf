package servicecidr

import (
	"math/big"
	"net/netip"
	"testing"
)

// FuzzPrefixContains checks which addresses a ServiceCIDR could have
// allocated, against a big-integer reading of upstream's PrefixContainsIP:
// broadcast is the prefix's last address, and an address belongs to a
// prefix of its family when it lies in it and is neither the network
// address nor, for IPv4, the broadcast address. Invalid prefixes hold
// nothing; nothing panics.
func FuzzPrefixContains(f *testing.F) {
	f.Add([]byte{10, 96, 0, 0}, 12, []byte{10, 96, 0, 1})
	f.Add([]byte{10, 96, 0, 0}, 12, []byte{10, 111, 255, 255})
	f.Add([]byte{10, 96, 0, 0}, 12, []byte{10, 96, 0, 0})
	f.Add([]byte{192, 168, 1, 7}, 32, []byte{192, 168, 1, 7})
	f.Add([]byte{192, 168, 1, 6}, 31, []byte{192, 168, 1, 7})
	f.Add([]byte{0, 0, 0, 0}, 0, []byte{255, 255, 255, 255})
	f.Add([]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 108, []byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0f, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 0}, 120, []byte{10, 0, 0, 5})
	f.Add([]byte{10, 0, 0, 0}, 33, []byte{10, 0, 0, 1})
	f.Add([]byte{10, 0, 0, 0}, -1, []byte{10, 0, 0, 1})
	f.Add([]byte{}, 0, []byte{})
	f.Fuzz(func(t *testing.T, prefixBytes []byte, bits int, addrBytes []byte) {
		base, ok := netip.AddrFromSlice(prefixBytes)
		if !ok {
			base = netip.Addr{}
		}
		addr, ok := netip.AddrFromSlice(addrBytes)
		if !ok {
			addr = netip.Addr{}
		}
		prefix := netip.PrefixFrom(base, bits)
		got := prefixContains(prefix, addr)
		if !prefix.IsValid() || !addr.IsValid() {
			if got {
				t.Fatalf("prefixContains(%v, %v) = true for an invalid prefix or address", prefix, addr)
			}
			return
		}

		width := prefix.Addr().BitLen()
		network := new(big.Int).SetBytes(prefix.Masked().Addr().AsSlice())
		hostMask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width-prefix.Bits())), big.NewInt(1))
		last := new(big.Int).Or(network, hostMask)
		if b := broadcast(prefix); new(big.Int).SetBytes(b.AsSlice()).Cmp(last) != 0 || b.BitLen() != width {
			t.Fatalf("broadcast(%v) = %v, want %v", prefix, b, last)
		}

		a := new(big.Int).SetBytes(addr.AsSlice())
		sameFamily := addr.BitLen() == width
		want := sameFamily && a.Cmp(network) > 0 && a.Cmp(last) <= 0 && !(addr.Is4() && a.Cmp(last) == 0)
		if got != want {
			t.Fatalf("prefixContains(%v, %v) = %v, want %v", prefix, addr, got, want)
		}
	})
}
