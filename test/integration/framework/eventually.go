package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// pollInterval is how often Eventually checks its condition.
const pollInterval = 100 * time.Millisecond

// Eventually polls cond until it returns true, failing the test when it
// returns an error or timeout passes first. cond should report a state that
// is not reached yet (such as NotFound) as (false, nil).
func Eventually(t testing.TB, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), pollInterval, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		lastErr = err
		return ok, err
	})
	switch {
	case err == nil:
	case lastErr != nil:
		t.Fatalf("condition failed: %v", lastErr)
	case errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err):
		t.Fatalf("condition not met within %v", timeout)
	default:
		t.Fatalf("waiting for condition: %v", err)
	}
}

// Consistently checks cond every pollInterval for d and fails the test the
// first time it is false: for asserting that something does NOT happen
// within a bounded window (a pod is not deleted before its deadline).
func Consistently(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(pollInterval) {
		if !cond() {
			t.Fatalf("%s: no longer true", what)
		}
	}
}
