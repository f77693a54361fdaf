package endpointslicemirroring

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzNamePrefix checks the generateName of the EndpointSlices mirrored
// from an Endpoints object, upstream's: "<name>-" when that is a valid
// name prefix, else the name; for every valid name the prefix ends in a
// hyphen and the names the API server generates from it (the prefix cut
// to 58 characters, five random ones) are valid.
func FuzzNamePrefix(f *testing.F) {
	for _, s := range []string{"kubernetes", "", "-", "a.b", "a.", strings.Repeat("a", 57) + ".b", strings.Repeat("a", 253), "UPPER", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := namePrefix(name)
		if got != name && got != name+"-" {
			t.Fatalf("namePrefix(%q) = %q", name, got)
		}
		if len(validation.IsDNS1123Subdomain(name)) != 0 {
			return
		}
		if got != name+"-" {
			t.Fatalf("namePrefix(%q) = %q, want the hyphen", name, got)
		}
		if generated := got[:min(len(got), 58)] + "x7k2q"; len(validation.IsDNS1123Subdomain(generated)) != 0 {
			t.Fatalf("namePrefix(%q) = %q, generating %q: %v", name, got, generated, validation.IsDNS1123Subdomain(generated))
		}
	})
}
