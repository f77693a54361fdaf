package job

import (
	"math"
	"strconv"
	"strings"
	"testing"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
)

// FuzzIndexedGenerateName checks the generateName of an Indexed Job's
// pods, upstream's podGenerateNameWithIndex: "<job>-<index>-" with the
// job name cut so that the whole is at most 58 characters (the API
// server's five random ones then make 63); the index is always whole, and
// for a valid job name whose cut does not end in a dot the generated name
// is a valid DNS subdomain.
func FuzzIndexedGenerateName(f *testing.F) {
	f.Add("pi", int32(0))
	f.Add("", int32(7))
	f.Add(strings.Repeat("a", 63), int32(0))
	f.Add(strings.Repeat("a", 63), int32(2147483647))
	f.Add(strings.Repeat("a", 253), int32(12345))
	f.Add(strings.Repeat("a", 46)+".b", int32(1234567890))
	f.Add("日本語", int32(3))
	f.Fuzz(func(t *testing.T, jobName string, index int32) {
		if index < 0 {
			index = -(index + 1) // indexes are never negative
		}
		ix := int(index)
		got := indexedGenerateName(jobName, ix)
		suffix := "-" + strconv.Itoa(ix) + "-"
		if !strings.HasSuffix(got, suffix) {
			t.Fatalf("indexedGenerateName(%q, %d) = %q: want suffix %q", jobName, ix, got, suffix)
		}
		cut := strings.TrimSuffix(got, suffix)
		if !strings.HasPrefix(jobName, cut) {
			t.Fatalf("indexedGenerateName(%q, %d) = %q: %q is no prefix of the job name", jobName, ix, got, cut)
		}
		if whole := jobName + suffix; len(whole) <= maxGeneratedNameLength {
			if got != whole {
				t.Fatalf("indexedGenerateName(%q, %d) = %q, want %q", jobName, ix, got, whole)
			}
		} else if len(got) != maxGeneratedNameLength {
			t.Fatalf("indexedGenerateName(%q, %d) = %q: %d long, want %d", jobName, ix, got, len(got), maxGeneratedNameLength)
		}
		if len(validation.IsDNS1123Subdomain(jobName)) == 0 && !strings.HasSuffix(cut, ".") {
			if errs := validation.IsDNS1123Subdomain(got + "x7k2q"); len(errs) != 0 {
				t.Fatalf("indexedGenerateName(%q, %d) = %q: %v", jobName, ix, got, errs)
			}
		}
	})
}

// FuzzIndexAnnotations checks the reading of a pod's completion index and
// failure count annotations: the canonical decimal form of a valid value
// reads as it is, anything else as "none" (-1 for the index, 0 for
// counts), and counts never leave [0, MaxInt32].
func FuzzIndexAnnotations(f *testing.F) {
	for _, s := range []string{"0", "1", "42", "-1", "+1", "01", "", " 1", "1.0", "2147483647", "2147483648",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "0x10", "日"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			batch.JobCompletionIndexAnnotation:          v,
			batch.JobIndexFailureCountAnnotation:        v,
			batch.JobIndexIgnoredFailureCountAnnotation: v,
		}}}
		n, err := strconv.Atoi(v)
		ix := completionIndex(pod)
		switch {
		case ix < noIndex:
			t.Fatalf("completionIndex(%q) = %d", v, ix)
		case err == nil && n >= 0 && ix != n:
			t.Fatalf("completionIndex(%q) = %d, want %d", v, ix, n)
		case (err != nil || n < 0) && ix != noIndex:
			t.Fatalf("completionIndex(%q) = %d, want %d", v, ix, noIndex)
		}
		if got := validIndex(pod, 10); got != noIndex && (got != ix || got >= 10) {
			t.Fatalf("validIndex(%q, 10) = %d", v, got)
		}

		// The zero Logger discards.
		c := indexFailureCount(klog.Logger{}, pod)
		want := int32(0)
		if err == nil && n >= 0 && n <= math.MaxInt32 {
			want = int32(n)
		}
		if c != want {
			t.Fatalf("indexFailureCount(%q) = %d, want %d", v, c, want)
		}
		if ig := indexIgnoredFailureCount(klog.Logger{}, pod); ig != want {
			t.Fatalf("indexIgnoredFailureCount(%q) = %d, want %d", v, ig, want)
		}
	})
}
