package hashing

import (
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// decodeSafe inverts rand.SafeEncodeString on the digits of a decimal
// number: it maps each character back to its digit, and fails for any
// other character.
func decodeSafe(s string) (string, bool) {
	back := map[byte]byte{}
	for d := byte('0'); d <= '9'; d++ {
		back[rand.SafeEncodeString(string(d))[0]] = d
	}
	out := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		d, ok := back[s[i]]
		if !ok {
			return "", false
		}
		out[i] = d
	}
	return string(out), true
}

// checkHash checks that h is what upstream's hashes look like: the
// SafeEncodeString of the decimal form of a uint32 (no leading zero), so
// 1 to 10 characters that make a DNS label and a label value.
func checkHash(t *testing.T, h string) {
	t.Helper()
	digits, ok := decodeSafe(h)
	if !ok || len(h) < 1 || len(h) > 10 {
		t.Fatalf("hash %q is not an encoded decimal number of 1 to 10 digits", h)
	}
	if n, err := strconv.ParseUint(digits, 10, 32); err != nil || strconv.FormatUint(n, 10) != digits {
		t.Fatalf("hash %q decodes to %q, not the decimal form of a uint32", h, digits)
	}
	if errs := validation.IsDNS1123Label(h); len(errs) != 0 {
		t.Fatalf("hash %q: %v", h, errs)
	}
	if errs := validation.IsValidLabelValue(h); len(errs) != 0 {
		t.Fatalf("hash %q: %v", h, errs)
	}
}

// FuzzPodTemplateHash checks the pod-template-hash: deterministic, equal
// for a deep copy (the hash follows values, not addresses), leaves the
// template alone, and always an encoded uint32 (see checkHash).
func FuzzPodTemplateHash(f *testing.F) {
	f.Add("", "", "", "", int32(0), false, int64(0))
	f.Add("app", "nginx", "web", "nginx:1.27", int32(0), true, int64(30))
	f.Add("app", "nginx", "web", "nginx:1.27", int32(1), true, int64(-1))
	f.Add("k", "v", "c", "img", int32(-1), true, int64(1<<62))
	f.Add("k", "v", "c", "img", int32(2147483647), true, int64(-1<<63))
	f.Add("日本", "\x00\xff", "\n", strings.Repeat("x", 4096), int32(-2147483648), true, int64(7))
	f.Fuzz(func(t *testing.T, key, value, name, image string, collisions int32, withCollisions bool, grace int64) {
		template := &v1.PodTemplateSpec{}
		template.Labels = map[string]string{key: value, "pod-template-hash": value}
		template.Spec.Containers = []v1.Container{{Name: name, Image: image, Args: []string{key, value}}}
		template.Spec.TerminationGracePeriodSeconds = &grace
		var cc *int32
		if withCollisions {
			cc = &collisions
		}
		before := template.String()

		h := PodTemplateHash(template, cc)
		checkHash(t, h)
		if again := PodTemplateHash(template, cc); again != h {
			t.Fatalf("hash is not deterministic: %q then %q", h, again)
		}
		if copied := PodTemplateHash(template.DeepCopy(), cc); copied != h {
			t.Fatalf("deep copy hashes to %q, the original to %q", copied, h)
		}
		if template.String() != before {
			t.Fatal("PodTemplateHash modified the template")
		}
		if cc != nil {
			c := *cc
			if other := PodTemplateHash(template, &c); other != h {
				t.Fatalf("equal collision counts at different addresses hash to %q and %q", h, other)
			}
		}
	})
}
