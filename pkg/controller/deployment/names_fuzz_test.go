package deployment

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzReplicaSetName checks ReplicaSet names, upstream's
// generateReplicaSetName: "<deployment>-<hash>" with the Deployment's name
// cut so that the whole is at most 253 characters; the hash is always
// whole, and for a valid Deployment name whose cut does not end in a dot
// the name is a valid DNS subdomain.
func FuzzReplicaSetName(f *testing.F) {
	f.Add("nginx", "76f8596b8b")
	f.Add("", "")
	f.Add(strings.Repeat("d", 253), "76f8596b8b")
	f.Add(strings.Repeat("d", 242), "76f8596b8b")
	f.Add(strings.Repeat("d", 241)+".x", "76f8596b8b")
	f.Add("d", strings.Repeat("h", 253))
	f.Add("d", strings.Repeat("h", 252))
	f.Add("日本", "ü")
	f.Fuzz(func(t *testing.T, deployment, hash string) {
		got := replicaSetName(deployment, hash)
		if !strings.HasSuffix(got, "-"+hash) {
			t.Fatalf("replicaSetName(%q, %q) = %q: want suffix %q", deployment, hash, got, "-"+hash)
		}
		cut := strings.TrimSuffix(got, "-"+hash)
		if !strings.HasPrefix(deployment, cut) {
			t.Fatalf("replicaSetName(%q, %q) = %q: %q is no prefix of the Deployment's name", deployment, hash, got, cut)
		}
		maxLen := validation.DNS1123SubdomainMaxLength - 1 - len(hash)
		switch {
		case maxLen <= 0 || len(deployment) <= maxLen:
			if cut != deployment {
				t.Fatalf("replicaSetName(%q, %q) = %q: the name was cut", deployment, hash, got)
			}
		case len(got) != validation.DNS1123SubdomainMaxLength:
			t.Fatalf("replicaSetName(%q, %q) = %q: %d long, want 253", deployment, hash, got, len(got))
		}
		if len(validation.IsDNS1123Subdomain(deployment)) == 0 && len(validation.IsDNS1123Label(hash)) == 0 &&
			len(hash) <= 10 && !strings.HasSuffix(cut, ".") {
			if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
				t.Fatalf("replicaSetName(%q, %q) = %q: %v", deployment, hash, got, errs)
			}
		}
	})
}
