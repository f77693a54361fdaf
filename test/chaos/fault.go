package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// recordFile is where a faulted run records when its fault was on, in the
// cluster's work dir (the run's directory under parity's OutDir).
const recordFile = "chaos-fault.json"

// Record is what a faulted run writes to recordFile: when the fault was on
// and what it measured of itself.
type Record struct {
	Fault      string
	Start, End time.Time
	// Figures are the fault's own measurements, e.g. "apf-rejected" (the
	// apiserver's 429s for the throttled level) or "kills".
	Figures map[string]float64 `json:",omitempty"`
}

// Config tunes the fault classes.
type Config struct {
	// Seed makes the crash and tcp schedules repeatable.
	Seed int64
	// Kills is how many times crash kills the controller manager (0: a
	// seeded 3 to 5), and crash-steps after each step (0: once).
	Kills int
}

// New returns the fault class of that name.
func New(name string, cfg Config) (parity.Fault, error) {
	var f fault
	switch name {
	case "throttle":
		return &recorded{f: &throttle{}, hold: hold}, nil
	case "churn":
		return &recorded{f: &churn{name: name, args: churnArgs, seed: cfg.Seed}, hold: hold}, nil
	case "compaction":
		return &recorded{f: &churn{name: name, args: compactionArgs, seed: cfg.Seed}, hold: hold}, nil
	case "tcp":
		f = &tcp{seed: cfg.Seed}
	case "restart":
		f = &restart{seed: cfg.Seed}
	case "crash":
		f = &crash{seed: cfg.Seed, kills: cfg.Kills}
	case "crash-steps":
		f = &crashSteps{seed: cfg.Seed, kills: cfg.Kills}
	default:
		return nil, fmt.Errorf("chaos: unknown fault %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return &recorded{f: f}, nil
}

// Names are the fault classes, in the order `make chaos` runs them.
func Names() []string {
	return []string{"throttle", "churn", "compaction", "tcp", "restart", "crash", "crash-steps"}
}

// hold is how long throttle, churn and compaction stay on at least, however
// quickly the scenario's steps are done: long enough for watches to time
// out (5-10 s) and be resumed after a compaction (every 5 s), so that the
// recorded window holds relists, and for controllers still working after
// the steps to meet the 429s.
const hold = 20 * time.Second

// fault is a class's own part; recorded adds the timing record.
type fault interface {
	parity.Fault
}

// figured is a FaultRun that reports figures when it ends.
type figured interface {
	figures() map[string]float64
}

// recorded wraps a fault so that each run records when it was on, and
// keeps it on for hold at least.
type recorded struct {
	f    fault
	hold time.Duration
}

func (r *recorded) Name() string                       { return r.f.Name() }
func (r *recorded) Configure(o *cluster.Options) error { return r.f.Configure(o) }

func (r *recorded) Start(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	run, err := r.f.Start(ctx, c, logf)
	if err != nil {
		return nil, err
	}
	// The window opens once the fault is on: tcp and churn restart the
	// controller manager behind their proxy first, and its start-up lists
	// are not the fault's.
	start := time.Now()
	return &recordedRun{run: run, rec: Record{Fault: r.f.Name(), Start: start}, path: filepath.Join(c.WorkDir, recordFile), hold: r.hold}, nil
}

type recordedRun struct {
	run  parity.FaultRun
	rec  Record
	path string
	hold time.Duration
}

func (r *recordedRun) End(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(r.rec.Start.Add(r.hold))):
	}
	err := r.run.End(ctx)
	r.rec.End = time.Now()
	if f, ok := r.run.(figured); ok {
		r.rec.Figures = f.figures()
	}
	b, jerr := json.MarshalIndent(r.rec, "", "  ")
	if jerr == nil {
		jerr = os.WriteFile(r.path, b, 0o644)
	}
	if err == nil && jerr != nil {
		err = fmt.Errorf("chaos: record: %w", jerr)
	}
	return err
}

func (r *recordedRun) Close() error { return r.run.Close() }

// AfterStep passes the step on to a fault that acts between steps.
func (r *recordedRun) AfterStep(ctx context.Context, i int, st *parity.Step) error {
	if h, ok := r.run.(parity.StepHook); ok {
		return h.AfterStep(ctx, i, st)
	}
	return nil
}

// ReadRecord reads a run's record; ok is false for a calm run.
func ReadRecord(runDir string) (rec Record, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(runDir, recordFile))
	if os.IsNotExist(err) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	return rec, true, json.Unmarshal(b, &rec)
}

// ensureLeader starts the controller manager with o if it is not running
// (a lost Lease ends both binaries, as a kubelet would restart its static
// pod) and waits until it leads. It reports whether it had to start it.
func ensureLeader(ctx context.Context, c *cluster.Cluster, o cluster.ControllerManagerOptions, logf func(string, ...any)) (bool, error) {
	if c.ControllerManagerRunning() {
		return false, nil
	}
	logf("chaos: the controller manager had exited; starting it again")
	if err := c.StartControllerManagerWith(ctx, o); err != nil {
		return true, err
	}
	return true, c.WaitForControllerManagerLeader(ctx)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
