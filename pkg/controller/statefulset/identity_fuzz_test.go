package statefulset

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upstreamPodRegex is upstream's statefulPodRegex.
var upstreamPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// upstreamParentAndOrdinal is upstream's getParentNameAndOrdinal.
func upstreamParentAndOrdinal(name string) (string, int) {
	m := upstreamPodRegex.FindStringSubmatch(name)
	if len(m) < 3 {
		return "", -1
	}
	ordinal := -1
	if i, err := strconv.ParseInt(m[2], 10, 32); err == nil {
		ordinal = int(i)
	}
	return m[1], ordinal
}

// FuzzParentAndOrdinal checks that a pod name is read as upstream's
// regular expression reads it, for every name without a line break (the
// expression's "." stops at one; pod names never have one), and that
// the ordinal is -1 or fits an int32.
func FuzzParentAndOrdinal(f *testing.F) {
	for _, s := range []string{
		"web-0", "web-12", "web", "web-", "-1", "-", "", "a-b-3", "web-01", "web-a1", "web-1a",
		"web-2147483647", "web-2147483648", "web-99999999999999999999", "web--1", "日本-3", "web-0\x00",
		"a-1-2-3", "web-+1", "web-١", strings.Repeat("a", 253) + "-7",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		parent, ordinal := parentAndOrdinal(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if ordinal < -1 {
			t.Fatalf("parentAndOrdinal(%q): ordinal %d", name, ordinal)
		}
		if strings.ContainsAny(name, "\n") {
			return
		}
		if wp, wo := upstreamParentAndOrdinal(name); parent != wp || ordinal != wo {
			t.Fatalf("parentAndOrdinal(%q) = %q, %d; upstream's = %q, %d", name, parent, ordinal, wp, wo)
		}
	})
}

// FuzzPodAndClaimNames checks the identities of a set's pods and claims:
// "<set>-<ordinal>" reads back as the set and ordinal for every
// non-negative int32 ordinal, the pod is a member of the set (and of no
// set whose name merely starts the same), and its claim of a template is
// "<template>-<set>-<ordinal>".
func FuzzPodAndClaimNames(f *testing.F) {
	f.Add("web", "data", int32(0))
	f.Add("web-1", "www", int32(2))
	f.Add("", "", int32(2147483647))
	f.Add("a", "b", int32(-1))
	f.Add("日本", "x-", int32(10))
	f.Add(strings.Repeat("s", 52), strings.Repeat("c", 63), int32(99))
	f.Fuzz(func(t *testing.T, setName, template string, ordinal int32) {
		if ordinal < 0 {
			ordinal = -(ordinal + 1)
		}
		set := &apps.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: setName}}
		name := podName(set, int(ordinal))
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{apps.StatefulSetPodNameLabel: name}}}
		if p, o := parentAndOrdinal(pod); p != setName || o != int(ordinal) {
			t.Fatalf("pod %q reads as set %q ordinal %d, want %q %d", name, p, o, setName, ordinal)
		}
		if !isMemberOf(set, pod) || !identityMatches(set, pod) {
			t.Fatalf("pod %q: not an identity of set %q", name, setName)
		}
		prefixSet := &apps.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: setName + "-" + strconv.Itoa(int(ordinal))}}
		if isMemberOf(prefixSet, pod) {
			t.Fatalf("pod %q counted as a member of set %q", name, prefixSet.Name)
		}
		claim := claimName(set, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: template}}, int(ordinal))
		if claim != template+"-"+name {
			t.Fatalf("claim %q, want %q", claim, template+"-"+name)
		}
	})
}
