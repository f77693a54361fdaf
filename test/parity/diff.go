package parity

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	line string
}

// UnifiedDiff returns a unified diff (diff -u) from a to b, labelled with
// the two names; "" when they are equal.
func UnifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	ops := diffLines(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for _, h := range hunks(ops) {
		out.WriteString(h)
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines is Myers' O((N+M)·D) shortest edit script.
func diffLines(a, b []string) []op {
	n, m := len(a), len(b)
	maxD := n + m
	offset := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1] // down: insertion
			} else {
				x = v[offset+k-1] + 1 // right: deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, d, offset)
			}
		}
	}
	return nil // not reached
}

// backtrack walks the saved V arrays from the end to recover the script.
func backtrack(a, b []string, trace [][]int, d, offset int) []op {
	x, y := len(a), len(b)
	var rev []op
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var prevK int
		if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[offset+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, op{' ', a[x]})
		}
		if x == prevX {
			y--
			rev = append(rev, op{'+', b[y]})
		} else {
			x--
			rev = append(rev, op{'-', a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{' ', a[x]})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

// hunks groups an edit script into unified-diff hunks with diffContext
// lines of context.
func hunks(ops []op) []string {
	var out []string
	i := 0
	aLine, bLine := 1, 1 // line numbers at ops[i]
	for i < len(ops) {
		// Find the next change.
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		if j == len(ops) {
			break
		}
		skip := max(0, j-i-diffContext)
		for _, o := range ops[i : i+skip] {
			aLine, bLine = advance(o, aLine, bLine)
		}
		start := i + skip
		// Extend while changes are within 2*diffContext of each other.
		end := j
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(run, end+diffContext)
				break
			}
			end = run
		}
		var body strings.Builder
		aStart, bStart, aCount, bCount := aLine, bLine, 0, 0
		for _, o := range ops[start:end] {
			body.WriteByte(o.kind)
			body.WriteString(o.line)
			body.WriteByte('\n')
			if o.kind != '+' {
				aCount++
			}
			if o.kind != '-' {
				bCount++
			}
			aLine, bLine = advance(o, aLine, bLine)
		}
		out = append(out, fmt.Sprintf("@@ -%s +%s @@\n%s", hunkRange(aStart, aCount), hunkRange(bStart, bCount), body.String()))
		i = end
	}
	return out
}

func advance(o op, a, b int) (int, int) {
	if o.kind != '+' {
		a++
	}
	if o.kind != '-' {
		b++
	}
	return a, b
}

// hunkRange formats "start,count" as diff -u does ("start" alone for one
// line, "start-1,0" for none).
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
