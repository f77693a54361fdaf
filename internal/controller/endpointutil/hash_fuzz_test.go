package endpointutil

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/utils/dump"
)

// FuzzDeepHashString checks the hash that orders ports and subsets against
// upstream's deepHashObjectToString (the hex FNV-128a of
// dump.ForHash(obj)): 32 lowercase hex digits, deterministic and the same
// for a deep copy.
func FuzzDeepHashString(f *testing.F) {
	f.Add("", "", int32(0), false)
	f.Add("http", "TCP", int32(80), true)
	f.Add("https", "UDP", int32(-1), true)
	f.Add("日本", "SCTP", int32(2147483647), false)
	f.Add(strings.Repeat("p", 1000), "\x00", int32(-2147483648), true)
	f.Fuzz(func(t *testing.T, name, protocol string, port int32, withAppProtocol bool) {
		proto := v1.Protocol(protocol)
		p := discovery.EndpointPort{Name: &name, Protocol: &proto, Port: &port}
		if withAppProtocol {
			p.AppProtocol = &name
		}
		ports := []discovery.EndpointPort{p, {Port: &port}}
		//lint:ignore SA1019 the endpoints controller still hashes the deprecated v1 Endpoints subsets
		subset := v1.EndpointSubset{Ports: []v1.EndpointPort{{Name: name, Port: port, Protocol: proto}}}

		for _, obj := range []any{p, ports, subset} {
			h := DeepHashString(obj)
			want := fnv.New128a()
			fmt.Fprint(want, dump.ForHash(obj))
			if w := hex.EncodeToString(want.Sum(nil)); h != w {
				t.Fatalf("DeepHashString(%#v) = %q, upstream's definition gives %q", obj, h, w)
			}
			if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
				t.Fatalf("hash %q: want 32 lowercase hex digits", h)
			}
			if again := DeepHashString(obj); again != h {
				t.Fatalf("hash is not deterministic: %q then %q", h, again)
			}
		}
		if a, b := DeepHashString(p), DeepHashString(*p.DeepCopy()); a != b {
			t.Fatalf("deep copy hashes to %q, the original to %q", b, a)
		}
	})
}
