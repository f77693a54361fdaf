package chaos

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kcm-dev/kcm/test/parity"
)

// TestFaultsQuick is the CI subset of `make chaos`: throttle (429s), churn
// (connections cut, watches re-established) and crash (two SIGKILLs) on
// two small multi-step scenarios (a Deployment scaled up and down, a Job
// tracked with pod finalizers), each diffed against upstream's calm run
// (made once, for throttle, and reused by the others).
// It fails on a DIFF, an ERROR or a panic in kcm's log. It starts one
// control plane per scenario and fault and one calm one per scenario
// (about 7 minutes on 2 cores), so -short skips
// it. Logs of a failure are kept and their directory logged.
func TestFaultsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes per fault")
	}
	var scenarios []*parity.Scenario
	for _, name := range []string{"deployment-scale", "job-nonindexed"} {
		s, err := parity.LoadScenario("../parity/scenarios/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, s)
	}
	out, err := os.MkdirTemp("", "kcm-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	failed := false
	outcomes, err := Run(ctx, scenarios, Options{
		Faults: []string{"throttle", "churn", "crash"},
		Config: Config{Seed: 1, Kills: 2},
		OutDir: out,
		Logf:   t.Logf,
		OnResult: func(o Outcome) {
			switch {
			case o.Result.Status == parity.StatusSkip:
				t.Logf("%s: kcm does not implement %v", o.Fault, o.Result.Missing)
			case o.Failed():
				failed = true
				t.Errorf("[%s] %s(panics in kcm's log: %d)", o.Fault, o.Result.Report(), o.Counts[labelKCM].Panics)
			case o.CountErr != nil:
				failed = true
				t.Errorf("[%s] counts: %v", o.Fault, o.CountErr)
			case o.Counts[labelCalm].Creates["pods"] == 0:
				// churn and crash reuse throttle's calm run (parity's
				// Options.Calm): its copied work dir must still count.
				failed = true
				t.Errorf("[%s] the calm run's counts are missing: %+v", o.Fault, o.Counts[labelCalm])
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s\n%s", Table(outcomes), Summary(outcomes))
	if failed {
		t.Logf("captures and logs kept in %s", out)
		return
	}
	if err := os.RemoveAll(out); err != nil {
		t.Log(err)
	}
}
