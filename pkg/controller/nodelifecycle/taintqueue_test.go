package nodelifecycle

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// drain runs Try once and returns the nodes handed out.
func drain(t *testing.T, q *taintQueue, fail map[string]bool) []string {
	logger, _ := ktesting.NewTestContext(t)
	var got []string
	q.Try(logger, func(n queuedNode) (bool, time.Duration) {
		got = append(got, n.name)
		return !fail[n.name], 0
	})
	return got
}

func TestTaintQueueRate(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	q := newTaintQueue(clk, 0.1) // one node per 10s, burst 1
	for _, n := range []string{"a", "b", "c"} {
		if !q.Add(n, "") {
			t.Fatalf("Add(%s) = false", n)
		}
		clk.Step(time.Millisecond)
	}
	if q.Add("a", "") {
		t.Error("a queued twice")
	}
	if got := drain(t, q, nil); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("first pass: %v, want [a] (burst 1)", got)
	}
	if got := drain(t, q, nil); got != nil {
		t.Errorf("no token: %v", got)
	}
	clk.Step(10 * time.Second)
	if got := drain(t, q, nil); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("after 10s: %v, want [b]", got)
	}
	// A handled node stays a member until removed.
	if q.Add("a", "") {
		t.Error("handled node queued again without Remove")
	}
	if !q.Remove("a") || !q.Add("a", "") {
		t.Error("Remove then Add failed")
	}
	if q.Len() != 2 {
		t.Errorf("Len = %d, want 2 (c, a)", q.Len())
	}
}

func TestTaintQueueRetryAndStop(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	q := newTaintQueue(clk, 1000)
	q.Add("a", "")
	q.Add("b", "")
	// a fails and goes behind b; with a burst of one, each pass after a
	// token refilled hands out one node.
	if got := drain(t, q, map[string]bool{"a": true}); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("first pass: %v, want [a]", got)
	}
	clk.Step(time.Second)
	if got := drain(t, q, nil); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("second pass: %v, want [b]", got)
	}
	q.SwapLimiter(0)
	if q.QPS() != 0 {
		t.Errorf("QPS = %v", q.QPS())
	}
	if got := drain(t, q, nil); got != nil {
		t.Errorf("stopped queue handed out %v", got)
	}
	q.SwapLimiter(1000)
	clk.Step(time.Second)
	if got := drain(t, q, nil); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("restarted: %v, want [a]", got)
	}
}
