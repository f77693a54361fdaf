package resourceclaim

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// upstreamGenerateName is the generateName upstream's resourceclaim
// controller computes for a pod's claim.
func upstreamGenerateName(podName, claimName string) string {
	generateName := podName + "-" + claimName + "-"
	if len(generateName) > 57 {
		generateName = podName[0:len(podName)*57/len(generateName)] + "-" + claimName[0:len(claimName)*57/len(generateName)]
	}
	return generateName
}

// FuzzGenerateName checks the generateName of a claim made from a
// template: upstream's, byte for byte; at most 57 characters, so that the
// API server's five random ones make at most 62; made of a prefix of the
// owner's name, a hyphen and a prefix of the claim's name. For an owner
// named by a DNS label it is a valid name prefix, unless the owner's part
// is cut away entirely (a one-character owner with a claim name of 55 or
// more characters; upstream's then fails validation too).
func FuzzGenerateName(f *testing.F) {
	f.Add("web-0", "gpu")
	f.Add("", "")
	f.Add("a", strings.Repeat("c", 63))
	f.Add(strings.Repeat("p", 253), "c")
	f.Add(strings.Repeat("p", 63), strings.Repeat("c", 63))
	f.Add("my.pod", "claim")
	f.Add("日本語", "ü")
	f.Fuzz(func(t *testing.T, owner, claim string) {
		got := generateName(owner, claim)
		if want := upstreamGenerateName(owner, claim); got != want {
			t.Fatalf("generateName(%q, %q) = %q, upstream's is %q", owner, claim, got, want)
		}
		if whole := owner + "-" + claim + "-"; len(whole) <= maxBaseLen {
			if got != whole {
				t.Fatalf("generateName(%q, %q) = %q, want %q", owner, claim, got, whole)
			}
		} else if len(got) > maxBaseLen {
			t.Fatalf("generateName(%q, %q) = %q: %d long", owner, claim, got, len(got))
		}
		// Some hyphen splits it into a prefix of each name.
		ownerPart, ok := "", false
		for i := 0; i < len(got) && !ok; i++ {
			if got[i] == '-' && strings.HasPrefix(owner, got[:i]) && strings.HasPrefix(claim+"-", got[i+1:]) {
				ownerPart, ok = got[:i], true
			}
		}
		if !ok {
			t.Fatalf("generateName(%q, %q) = %q: not <owner prefix>-<claim prefix>", owner, claim, got)
		}
		if len(validation.IsDNS1123Label(owner)) == 0 && len(validation.IsDNS1123Label(claim)) == 0 && ownerPart != "" {
			if errs := validation.IsDNS1123Subdomain(got + "x7k2q"); len(errs) != 0 {
				t.Fatalf("generateName(%q, %q) = %q: %v", owner, claim, got, errs)
			}
		}
	})
}
