package procs

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeGovernor returns a Governor at size cur whose process used the CPU
// time its test adds to *used.
func fakeGovernor(maxProcs, cur int) (*Governor, *time.Duration, *[]int) {
	used := new(time.Duration)
	sets := new([]int)
	g := &Governor{
		Max:     maxProcs,
		CPUTime: func() time.Duration { return *used },
		Set:     func(n int) { *sets = append(*sets, n) },
		cur:     cur,
	}
	return g, used, sets
}

func TestGovernorRaisesAtOnceAndLowersAfterSettling(t *testing.T) {
	g, used, sets := fakeGovernor(4, 4)
	tick := func(demand float64) (int, bool) {
		*used += time.Duration(demand * float64(time.Second))
		return g.step(time.Second)
	}
	// Low demand: the size drops only after settle periods.
	for i := 1; i < settle; i++ {
		if n, changed := tick(0.1); changed || n != 4 {
			t.Fatalf("period %d of low demand: size %d (changed %v), want 4 kept", i, n, changed)
		}
	}
	if n, changed := tick(0.1); !changed || n != 1 {
		t.Fatalf("after %d periods of 0.1 CPU: size %d (changed %v), want 1", settle, n, changed)
	}
	// A busy period raises it at once, to what the demand needs.
	if n, changed := tick(1.0); !changed || n != 2 {
		t.Fatalf("1 CPU of demand: size %d (changed %v), want 2", n, changed)
	}
	if n, _ := tick(3.5); n != 4 {
		t.Fatalf("3.5 CPUs of demand: size %d, want the maximum 4", n)
	}
	// A dip shorter than settle periods changes nothing.
	for range settle - 1 {
		tick(0.2)
	}
	if n, changed := tick(3.0); changed || n != 4 {
		t.Fatalf("after a short dip: size %d (changed %v), want 4 kept", n, changed)
	}
	if want := []int{1, 2, 4}; len(*sets) != len(want) || (*sets)[0] != 1 || (*sets)[1] != 2 || (*sets)[2] != 4 {
		t.Fatalf("GOMAXPROCS set to %v, want %v", *sets, want)
	}
}

func TestGovernorStaysWithinBounds(t *testing.T) {
	g, used, _ := fakeGovernor(2, 1)
	*used += 10 * time.Second // far more than 2 CPUs could use
	if n, _ := g.step(time.Second); n != 2 {
		t.Fatalf("size %d, want the maximum 2", n)
	}
	for range settle {
		g.step(time.Second) // no CPU used at all
	}
	if g.cur != 1 {
		t.Fatalf("size %d with no demand, want 1", g.cur)
	}
}

func TestCPUTimeAdvances(t *testing.T) {
	if cpuTime == nil {
		t.Skip("no CPU time on this platform")
	}
	start := cpuTime()
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for cpuTime() == start {
		if time.Now().After(deadline) {
			t.Fatal("the process's CPU time did not advance while it spun")
		}
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
}

func TestRunRestoresTheMaximumWhenDone(t *testing.T) {
	g, _, sets := fakeGovernor(4, 4)
	var mu sync.Mutex
	set := g.Set
	g.Set = func(n int) { mu.Lock(); defer mu.Unlock(); set(n) }
	ctx, cancel := context.WithTimeout(t.Context(), Period+Period/2)
	defer cancel()
	g.Run(ctx) // one tick without CPU use: no change yet (settle)
	mu.Lock()
	defer mu.Unlock()
	if len(*sets) != 1 || (*sets)[0] != 4 {
		t.Fatalf("GOMAXPROCS set to %v, want only the maximum 4 restored at the end", *sets)
	}
}
