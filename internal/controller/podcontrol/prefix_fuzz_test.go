package podcontrol

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// generated is the name the API server makes from generateName prefix:
// the prefix cut to 58 characters, and five random ones.
func generated(prefix string) string {
	return prefix[:min(len(prefix), 58)] + "x7k2q"
}

// FuzzGenerateNamePrefix checks the generateName of a controller's pods,
// upstream's getPodsPrefix: "<owner>-" when that is a valid name prefix,
// else the owner's name; for every validly named owner the prefix ends in
// a hyphen and the names the API server generates from it are valid.
func FuzzGenerateNamePrefix(f *testing.F) {
	for _, s := range []string{"web", "", "-", "a.b", "a.", strings.Repeat("a", 57) + ".b", strings.Repeat("a", 252),
		strings.Repeat("a", 253), "UPPER", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, owner string) {
		got := GenerateNamePrefix(owner)
		if got != owner && got != owner+"-" {
			t.Fatalf("GenerateNamePrefix(%q) = %q", owner, got)
		}
		if len(validation.IsDNS1123Subdomain(owner)) != 0 {
			return
		}
		if got != owner+"-" {
			t.Fatalf("GenerateNamePrefix(%q) = %q, want the hyphen", owner, got)
		}
		if errs := validation.IsDNS1123Subdomain(generated(got)); len(errs) != 0 {
			t.Fatalf("GenerateNamePrefix(%q) = %q, generating %q: %v", owner, got, generated(got), errs)
		}
	})
}
