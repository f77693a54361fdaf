package clustertrustbundlepublisher

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzBundleName checks ClusterTrustBundle names against upstream's
// constructBundleName: the signer name with every "/" made ":", a ":",
// and 24 hex digits of the bundle's SHA-256; deterministic, slash-free,
// and, with its colons read as dots, a DNS subdomain (at most 253
// characters) whenever the signer name is one of at most 228 characters
// with its slashes read as dots.
func FuzzBundleName(f *testing.F) {
	f.Add("kubernetes.io/kube-apiserver-serving", []byte("-----BEGIN CERTIFICATE-----\n"))
	f.Add("", []byte(nil))
	f.Add("example.com/a/b/c", []byte{0, 1, 2})
	f.Add("///", []byte("x"))
	f.Add("日本/x", []byte("\xff"))
	f.Add(strings.Repeat("a", 228), []byte("ca"))
	f.Fuzz(func(t *testing.T, signer string, ca []byte) {
		name := BundleName(signer, ca)
		sum := sha256.Sum256(ca)
		want := strings.ReplaceAll(signer, "/", ":") + ":" + hex.EncodeToString(sum[:12])
		if name != want {
			t.Fatalf("BundleName(%q) = %q, upstream's definition gives %q", signer, name, want)
		}
		if strings.Contains(name, "/") {
			t.Fatalf("bundle name %q holds a slash", name)
		}
		if again := BundleName(signer, append([]byte(nil), ca...)); again != name {
			t.Fatalf("not deterministic: %q then %q", name, again)
		}
		if len(signer) <= 228 && signer != "" {
			bare := strings.ReplaceAll(signer, "/", ".")
			if len(validation.IsDNS1123Subdomain(bare)) == 0 && !strings.Contains(signer, "//") {
				if errs := validation.IsDNS1123Subdomain(strings.ReplaceAll(name, ":", ".")); len(errs) != 0 {
					t.Fatalf("bundle name %q: %v", name, errs)
				}
			}
		}
	})
}
