package job

import (
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// interval is a closed range of completion indexes.
type interval struct {
	first, last int
}

// intervals is a sorted list of disjoint, non-adjacent index ranges: the
// representation of status.completedIndexes, status.failedIndexes and a
// success policy rule's succeededIndexes ("1,3-5,7").
type intervals []interval

// parseIntervals reads upstream's compressed format, keeping only indexes
// below completions. Malformed pieces are logged and skipped; adjacent
// pieces are joined.
func parseIntervals(logger klog.Logger, s string, completions int) intervals {
	if s == "" {
		return nil
	}
	var out intervals
	for _, piece := range strings.Split(s, ",") {
		bounds := strings.Split(piece, "-")
		first, err := strconv.Atoi(bounds[0])
		if err != nil {
			logger.Info("Corrupted indexes interval, ignoring", "interval", piece, "err", err)
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if len(bounds) > 1 {
			if last, err = strconv.Atoi(bounds[1]); err != nil {
				logger.Info("Corrupted indexes interval, ignoring", "interval", piece, "err", err)
				continue
			}
			last = min(last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].last == first-1 {
			out[n-1].last = last
		} else {
			out = append(out, interval{first, last})
		}
	}
	return out
}

// String renders the intervals in upstream's format: a range of two is
// written "a,b", a longer one "a-b".
func (iv intervals) String() string {
	var b strings.Builder
	for _, r := range iv {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r.first))
		switch {
		case r.last == r.first+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(r.last))
		case r.last > r.first:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.last))
		}
	}
	return b.String()
}

// total is the number of indexes covered.
func (iv intervals) total() int {
	n := 0
	for _, r := range iv {
		n += r.last - r.first + 1
	}
	return n
}

// has reports whether ix is covered (binary search).
func (iv intervals) has(ix int) bool {
	lo, hi := 0, len(iv)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if iv[mid].last >= ix {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi < len(iv) && iv[hi].first <= ix
}

// withIndexes returns the union of iv and sorted (ascending, repeats
// allowed) indexes; iv is not modified.
func (iv intervals) withIndexes(sorted []int) intervals {
	add := make(intervals, len(sorted))
	for i, ix := range sorted {
		add[i] = interval{ix, ix}
	}
	return iv.merge(add)
}

// merge returns the union of two interval lists; neither is modified.
func (iv intervals) merge(other intervals) intervals {
	out := make(intervals, 0, len(iv)+len(other))
	push := func(r interval) {
		if n := len(out); n > 0 && r.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, r.last)
			return
		}
		out = append(out, r)
	}
	i, j := 0, 0
	for i < len(iv) && j < len(other) {
		if iv[i].first < other[j].first {
			push(iv[i])
			i++
		} else {
			push(other[j])
			j++
		}
	}
	for ; i < len(iv); i++ {
		push(iv[i])
	}
	for ; j < len(other); j++ {
		push(other[j])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
