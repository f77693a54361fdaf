package ttl

import "testing"

func TestSizerHysteresis(t *testing.T) {
	var s sizer
	steps := []struct {
		to   int
		want int
	}{
		{to: 100, want: 0},
		{to: 101, want: 15},
		{to: 90, want: 15}, // still within [90, 500]
		{to: 89, want: 0},
		{to: 100, want: 0},
		{to: 501, want: 30},
		{to: 450, want: 30},
		{to: 1001, want: 60},
		{to: 2001, want: 300},
		{to: 1800, want: 300},
		{to: 1799, want: 60},
		{to: 899, want: 30},
		{to: 449, want: 15},
		{to: 0, want: 0},
	}
	for _, st := range steps {
		for s.count < st.to {
			s.add()
		}
		for s.count > st.to {
			s.remove()
		}
		if got := s.ttlSeconds(); got != st.want {
			t.Errorf("at %d nodes: ttl %d, want %d", st.to, got, st.want)
		}
	}
}

func TestSizerReportsChanges(t *testing.T) {
	var s sizer
	for i := 0; i < 100; i++ {
		if s.add() {
			t.Fatalf("change reported at %d nodes", i+1)
		}
	}
	if !s.add() {
		t.Error("no change reported at 101 nodes")
	}
	for s.count > 90 {
		if s.remove() {
			t.Fatalf("change reported at %d nodes", s.count)
		}
	}
	if !s.remove() {
		t.Error("no change reported at 89 nodes")
	}
}
