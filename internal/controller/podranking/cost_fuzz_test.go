package podranking

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDeletionCost checks the reading of controller.kubernetes.io/
// pod-deletion-cost as upstream reads it: a value that starts as a
// canonical integer ("-" or a digit other than a leading zero; "+1" and
// "01" do not) and parses as an int32 is the cost, anything else 0; so
// every int32 in its decimal form reads back as itself.
func FuzzDeletionCost(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "+1", "01", "-01", "-0", "", " 1", "1 ", "2147483647", "2147483648",
		"-2147483648", "-2147483649", "1e3", "0x10", "日", "--1"} {
		f.Add(s, true)
	}
	f.Add("", false)
	f.Fuzz(func(t *testing.T, v string, set bool) {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if set {
			pod.Annotations[DeletionCostAnnotation] = v
		}
		got := DeletionCost(pod)
		want := int32(0)
		canonicalStart := v != "" && (v[0] == '-' || v == "0" || v[0] >= '1' && v[0] <= '9')
		if n, err := strconv.ParseInt(v, 10, 32); set && canonicalStart && err == nil {
			want = int32(n)
		}
		if got != want {
			t.Fatalf("DeletionCost(%q) = %d, want %d", v, got, want)
		}
		if n, err := strconv.ParseInt(v, 10, 32); set && err == nil && strconv.FormatInt(n, 10) == v && got != int32(n) {
			t.Fatalf("DeletionCost(%q) = %d: a canonical int32 does not read back", v, got)
		}
	})
}
