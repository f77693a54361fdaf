package job

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// FuzzParseIntervals checks that any completedIndexes/failedIndexes
// string parses without a panic into intervals that start at a valid
// index below completions and end below it, and that what parses from a
// rendering parses back to the same rendering.
func FuzzParseIntervals(f *testing.F) {
	for _, s := range []string{
		"", "0", "1,3-5,7", "0-2,3", "1,2", "5-3", "3-3", "-1", "1-", "-", ",", ",,1,,",
		"+1", "01", "1-2-3", "a", "1,a,2", "9223372036854775807", "0-9223372036854775807",
		"9223372036854775808", "99999999999999999999-1", "0-4,2-8", "7,3", " 1", "1 ,2", "日",
		strings.Repeat("1,", 10000),
	} {
		f.Add(s, int32(10))
	}
	f.Add("0-5", int32(0))
	f.Add("0-5", int32(-1))
	f.Add("0-100000", int32(2147483647))
	f.Fuzz(func(t *testing.T, s string, completions int32) {
		// The zero Logger discards.
		iv := parseIntervals(klog.Logger{}, s, int(completions))
		for _, r := range iv {
			if r.first < 0 || r.first >= int(completions) || r.last >= int(completions) {
				t.Fatalf("parseIntervals(%q, %d) = %v: interval %v out of range", s, completions, iv, r)
			}
		}
		rendered := iv.String()
		if again := parseIntervals(klog.Logger{}, rendered, int(completions)).String(); again != rendered {
			t.Fatalf("parseIntervals(%q, %d) renders %q, which parses back to %q", s, completions, rendered, again)
		}
	})
}

// fuzzIndexes reads a sorted index list (repeats allowed) below 256.
func fuzzIndexes(data []byte) []int {
	out := make([]int, len(data))
	for i, b := range data {
		out[i] = int(b)
	}
	slices.Sort(out)
	return out
}

// wellFormed reports whether iv is what the controller keeps: sorted,
// disjoint, non-adjacent, non-empty ranges.
func wellFormed(iv intervals) bool {
	for i, r := range iv {
		if r.last < r.first || i > 0 && r.first <= iv[i-1].last+1 {
			return false
		}
	}
	return true
}

// render is upstream's format of a set of indexes, written from the set:
// runs of three or more as "a-b", other indexes one by one.
func render(set map[int]bool) string {
	var parts []string
	for i := 0; i < 300; {
		if !set[i] {
			i++
			continue
		}
		j := i
		for set[j+1] {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, strconv.Itoa(i)+"-"+strconv.Itoa(j))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(k))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// FuzzIntervalsUnion checks the index set operations against a map model:
// withIndexes and merge compute unions and keep the intervals well formed,
// has and total agree with the set, String writes upstream's format, and
// parsing it gives the same intervals back.
func FuzzIntervalsUnion(f *testing.F) {
	f.Add([]byte{1, 3, 4, 5, 7}, []byte{2, 8, 9})
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0, 0, 0}, []byte{1})
	f.Add([]byte{255}, []byte{0, 254})
	f.Add([]byte{10, 11, 12, 13}, []byte{5, 6, 20, 21, 22})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ia, ib := fuzzIndexes(a), fuzzIndexes(b)
		x := intervals(nil).withIndexes(ia)
		y := intervals(nil).withIndexes(ib)
		union := x.merge(y)
		set := map[int]bool{}
		for _, i := range append(ia, ib...) {
			set[i] = true
		}
		for name, iv := range map[string]intervals{"x": x, "y": y, "union": union, "x+b": x.withIndexes(ib)} {
			if !wellFormed(iv) {
				t.Fatalf("%s = %v is not sorted, disjoint and non-adjacent", name, iv)
			}
		}
		if got := x.withIndexes(ib); got.String() != union.String() {
			t.Fatalf("withIndexes gives %v, merge %v", got, union)
		}
		if union.total() != len(set) {
			t.Fatalf("union %v: total %d, want %d", union, union.total(), len(set))
		}
		for i := -1; i <= 257; i++ {
			if union.has(i) != set[i] {
				t.Fatalf("union %v: has(%d) = %v", union, i, union.has(i))
			}
		}
		s := union.String()
		if want := render(set); s != want {
			t.Fatalf("union renders %q, want %q", s, want)
		}
		back := parseIntervals(klog.Logger{}, s, 1000)
		if !slices.Equal(back, union) {
			t.Fatalf("%q parses to %v, want %v", s, back, union)
		}
	})
}
