package attachdetach

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzAttachmentName checks VolumeAttachment names against upstream's
// definition, "csi-" and the hex SHA-256 of handle, driver and node
// concatenated: 68 characters, deterministic, a valid DNS subdomain.
func FuzzAttachmentName(f *testing.F) {
	f.Add("vol-1", "hostpath.csi.k8s.io", "node-a")
	f.Add("", "", "")
	f.Add("projects/p/zones/z/disks/d", "pd.csi.storage.gke.io", "gke-node-1")
	f.Add("a^b", "日本", "\x00")
	f.Add(strings.Repeat("h", 4096), strings.Repeat("d", 63), strings.Repeat("n", 253))
	f.Fuzz(func(t *testing.T, handle, driver, node string) {
		name := attachmentName(handle, driver, node)
		sum := sha256.Sum256([]byte(handle + driver + node))
		if want := "csi-" + hex.EncodeToString(sum[:]); name != want {
			t.Fatalf("attachmentName = %q, upstream's definition gives %q", name, want)
		}
		if len(name) != 68 {
			t.Fatalf("attachment name %q is %d long, want 68", name, len(name))
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) != 0 {
			t.Fatalf("attachment name %q: %v", name, errs)
		}
		if again := attachmentName(handle, driver, node); again != name {
			t.Fatalf("not deterministic: %q then %q", name, again)
		}
	})
}

// FuzzUniqueVolumeName checks that splitUniqueVolumeName inverts
// uniqueVolumeName for every non-empty driver and volume handle without a
// "^", refuses names with more than one "^" (as upstream's CSI detacher,
// which splits at every "^" and wants two parts), and never splits names
// of other plugins.
func FuzzUniqueVolumeName(f *testing.F) {
	f.Add("hostpath.csi.k8s.io", "vol-1")
	f.Add("d", "a/b")
	f.Add("d", "a^b")
	f.Add("d", "^")
	f.Add("d", "")
	f.Add("", "h")
	f.Add("日本", "\x00\xff")
	f.Fuzz(func(t *testing.T, driver, handle string) {
		name := uniqueVolumeName(driver, handle)
		d, h, ok := splitUniqueVolumeName(name)
		seps := strings.Count(driver+handle, volNameSep)
		valid := driver != "" && handle != "" && seps == 0
		if valid && (!ok || d != driver || h != handle) {
			t.Fatalf("split(%q) = %q, %q, %v; want %q, %q, true", name, d, h, ok, driver, handle)
		}
		if ok && seps > 0 {
			t.Fatalf("split(%q) = %q, %q: a name with %d extra %q split", name, d, h, seps, volNameSep)
		}
		if ok && uniqueVolumeName(d, h) != name {
			t.Fatalf("split(%q) = %q, %q, which do not join back", name, d, h)
		}
		if ok && (d == "" || h == "") {
			t.Fatalf("split(%q) = %q, %q: an empty part", name, d, h)
		}
		if _, _, ok := splitUniqueVolumeName(v1.UniqueVolumeName("kubernetes.io/iscsi/" + driver + volNameSep + handle)); ok {
			t.Fatalf("an iSCSI name split")
		}
	})
}
