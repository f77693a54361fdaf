package parity

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	plain := func(i int) string { return "line " + itoa(i) }
	tests := []struct {
		name, a, b, want string
	}{{
		name: "equal",
		a:    "x\ny\n", b: "x\ny\n",
		want: "",
	}, {
		name: "one line changed in the middle, three lines of context",
		a:    lines(10, plain),
		b:    lines(10, func(i int) string { return map[bool]string{true: "changed", false: plain(i)}[i == 5] }),
		want: "--- a\n+++ b\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+changed\n line 6\n line 7\n line 8\n",
	}, {
		name: "from empty",
		a:    "", b: "x\ny\n",
		want: "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n",
	}, {
		name: "to empty",
		a:    "x\n", b: "",
		want: "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n",
	}, {
		name: "two distant changes make two hunks",
		a:    lines(20, plain),
		b: lines(20, func(i int) string {
			if i == 2 || i == 19 {
				return "new " + itoa(i)
			}
			return plain(i)
		}),
		want: "--- a\n+++ b\n@@ -1,5 +1,5 @@\n line 1\n-line 2\n+new 2\n line 3\n line 4\n line 5\n" +
			"@@ -16,5 +16,5 @@\n line 16\n line 17\n line 18\n-line 19\n+new 19\n line 20\n",
	}, {
		name: "insertion at the end",
		a:    "a\nb\n", b: "a\nb\nc\n",
		want: "--- a\n+++ b\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnifiedDiff("a", "b", tc.a, tc.b); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestDiffLinesApplies checks that the edit script turns a into b for a few
// shapes, and is minimal where that is easy to know.
func TestDiffLinesApplies(t *testing.T) {
	tests := []struct {
		a, b    string
		minimal int // number of - and + lines
	}{
		{"a b c a b b a", "c b a b a c", 5},
		{"x", "y", 2},
		{"", "a b", 2},
		{"a b c", "a b c", 0},
		{"a a a a", "a", 3},
	}
	for _, tc := range tests {
		a, b := strings.Fields(tc.a), strings.Fields(tc.b)
		ops := diffLines(a, b)
		var gotA, gotB []string
		changes := 0
		for _, o := range ops {
			if o.kind != '+' {
				gotA = append(gotA, o.line)
			}
			if o.kind != '-' {
				gotB = append(gotB, o.line)
			}
			if o.kind != ' ' {
				changes++
			}
		}
		if strings.Join(gotA, " ") != strings.Join(a, " ") || strings.Join(gotB, " ") != strings.Join(b, " ") {
			t.Errorf("%q → %q: script %v does not reproduce both sides", tc.a, tc.b, ops)
		}
		if changes != tc.minimal {
			t.Errorf("%q → %q: %d changes, want %d", tc.a, tc.b, changes, tc.minimal)
		}
	}
}
