package history

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzRevisionHash checks a raw revision's hash against upstream's
// definition (the SafeEncodeString of the decimal FNV-1 32 of the raw data
// followed by the decimal probe), and that it is deterministic and a valid
// label value.
func FuzzRevisionHash(f *testing.F) {
	f.Add([]byte(nil), int32(0), false)
	f.Add([]byte(`{"spec":{"template":{}}}`), int32(0), true)
	f.Add([]byte(`{"spec":{"template":{}}}`), int32(1), true)
	f.Add([]byte("\x00\xff日本"), int32(-2147483648), true)
	f.Add([]byte(strings.Repeat("a", 1<<16)), int32(2147483647), true)
	f.Fuzz(func(t *testing.T, raw []byte, probe int32, withProbe bool) {
		rev := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: raw}}
		var p *int32
		if withProbe {
			p = &probe
		}
		h := Hash(rev, p)

		want := fnv.New32()
		want.Write(raw)
		if p != nil {
			want.Write([]byte(strconv.FormatInt(int64(probe), 10)))
		}
		if w := rand.SafeEncodeString(fmt.Sprint(want.Sum32())); h != w {
			t.Fatalf("Hash = %q, upstream's definition gives %q", h, w)
		}
		if again := Hash(rev.DeepCopy(), p); again != h {
			t.Fatalf("hash is not deterministic: %q then %q", h, again)
		}
		if len(h) == 0 || len(h) > 10 {
			t.Fatalf("hash %q: want 1 to 10 characters", h)
		}
		if errs := validation.IsValidLabelValue(h); len(errs) != 0 {
			t.Fatalf("hash %q: %v", h, errs)
		}
	})
}

// FuzzRevisionName checks revision names: "<prefix>-<hash>" with the
// prefix cut to 223 bytes, so that the name of any owner with a hash of up
// to 29 characters fits a DNS subdomain; the name is valid whenever the
// owner's name is and the cut does not end it with a dot (upstream's
// names then fail validation too). New labels the revision with the same
// hash it names it by.
func FuzzRevisionName(f *testing.F) {
	f.Add("web", []byte("data"), int32(0))
	f.Add("", []byte(nil), int32(-1))
	f.Add(strings.Repeat("a", 223), []byte("x"), int32(1))
	f.Add(strings.Repeat("a", 224), []byte("x"), int32(2))
	f.Add(strings.Repeat("a", 253), []byte("x"), int32(3))
	f.Add(strings.Repeat("a", 222)+".bc", []byte("x"), int32(4))
	f.Add(strings.Repeat("ab.", 100), []byte("x"), int32(5))
	f.Add("日本語", []byte("x"), int32(6))
	f.Fuzz(func(t *testing.T, owner string, raw []byte, collisions int32) {
		parent := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: owner, UID: "uid"}}
		rev := New(parent, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), map[string]string{"app": "x"},
			runtime.RawExtension{Raw: raw}, 3, &collisions)
		hash := rev.Labels[HashLabel]
		if hash == "" || hash != Hash(rev, &collisions) {
			t.Fatalf("revision labelled with hash %q, Hash says %q", hash, Hash(rev, &collisions))
		}
		if rev.Name != Name(owner, hash) {
			t.Fatalf("revision named %q, Name says %q", rev.Name, Name(owner, hash))
		}
		cut := owner[:min(len(owner), maxPrefix)]
		if rev.Name != cut+"-"+hash {
			t.Fatalf("revision name %q, want %q", rev.Name, cut+"-"+hash)
		}
		if len(rev.Name) > validation.DNS1123SubdomainMaxLength {
			t.Fatalf("revision name %q is %d long", rev.Name, len(rev.Name))
		}
		if len(validation.IsDNS1123Subdomain(owner)) == 0 && !strings.HasSuffix(cut, ".") {
			if errs := validation.IsDNS1123Subdomain(rev.Name); len(errs) != 0 {
				t.Fatalf("revision name %q of owner %q: %v", rev.Name, owner, errs)
			}
		}
		if rev.Revision != 3 || rev.Namespace != "ns" || metav1.GetControllerOf(rev) == nil {
			t.Fatalf("revision %+v: want revision 3 in ns controlled by its owner", rev.ObjectMeta)
		}
	})
}
