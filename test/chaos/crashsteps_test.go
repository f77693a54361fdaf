package chaos

import (
	"context"
	"testing"

	"github.com/kcm-dev/kcm/test/parity"
)

// TestMutates: crash-steps kills after the objects and after steps that
// change the cluster, not after waits, settles or controller-manager steps.
func TestMutates(t *testing.T) {
	n := 2
	for _, tc := range []struct {
		st   *parity.Step
		want bool
	}{
		{nil, true},
		{&parity.Step{Apply: parity.Objects{{}}}, true},
		{&parity.Step{Delete: &parity.DeleteStep{}}, true},
		{&parity.Step{Scale: &parity.ScaleStep{}}, true},
		{&parity.Step{Nodes: &n}, true},
		{&parity.Step{Wait: &parity.WaitStep{}}, false},
		{&parity.Step{Settle: &parity.Settle{}}, false},
		{&parity.Step{ControllerManager: "restart"}, false},
	} {
		if got := mutates(tc.st); got != tc.want {
			t.Errorf("mutates(%v) = %v, want %v", tc.st, got, tc.want)
		}
	}
}

type hookRun struct {
	steps []int
}

func (*hookRun) End(context.Context) error { return nil }
func (*hookRun) Close() error              { return nil }
func (h *hookRun) AfterStep(_ context.Context, i int, _ *parity.Step) error {
	h.steps = append(h.steps, i)
	return nil
}

// TestRecordedRunForwardsSteps: the record wrapper passes steps on to a
// fault that acts between them, and is a StepHook harmlessly for one that
// does not.
func TestRecordedRunForwardsSteps(t *testing.T) {
	inner := &hookRun{}
	var run parity.FaultRun = &recordedRun{run: inner}
	h, ok := run.(parity.StepHook)
	if !ok {
		t.Fatal("recordedRun is not a StepHook")
	}
	for _, i := range []int{-1, 0, 3} {
		if err := h.AfterStep(context.Background(), i, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(inner.steps) != 3 || inner.steps[0] != -1 || inner.steps[2] != 3 {
		t.Errorf("forwarded %v", inner.steps)
	}
	plain := &recordedRun{run: &crashRun{}}
	if err := plain.AfterStep(context.Background(), 0, nil); err != nil {
		t.Error(err)
	}
}
