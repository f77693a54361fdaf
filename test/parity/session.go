package parity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kcm-dev/kcm/test/cluster"
)

// errUnsettled says the captured state kept changing until the settle
// timeout.
var errUnsettled = errors.New("captured state did not settle")

// session is a scenario running on one cluster: steps, capture and
// normalisation together.
type session struct {
	s     *Scenario
	steps *stepRunner
	cap   *capturer
	norm  *Normalizer
	logf  func(format string, args ...any)
	// hook, if set, acts after the objects and after each step.
	hook StepHook
}

func newSession(c *cluster.Cluster, s *Scenario, upstream string, logf func(string, ...any)) (*session, error) {
	k, err := newKinds(c.RESTConfig)
	if err != nil {
		return nil, err
	}
	known, err := knownValues(c)
	if err != nil {
		return nil, err
	}
	sess := &session{
		s:    s,
		cap:  &capturer{kinds: k, specs: s.Capture, defaultNamespaces: s.namespaces()},
		norm: &Normalizer{Known: known, Ignore: s.Ignore},
		logf: logf,
	}
	sess.steps = &stepRunner{cluster: c, kinds: k, logf: logf, deleted: map[string]types.UID{}, upstream: upstream}
	sess.steps.settle = func(ctx context.Context, set *Settle) error {
		_, err := sess.settleAndCapture(ctx, set)
		return err
	}
	return sess, nil
}

// knownValues are the cluster-specific literals the normaliser replaces.
func knownValues(c *cluster.Cluster) (map[string]string, error) {
	known := map[string]string{
		c.APIServerURL: "<apiserver-url>",
		"127.0.0.1:" + strconv.Itoa(c.Ports.APIServer): "<apiserver-host>",
		c.WorkDir: "<work-dir>",
	}
	for path, name := range map[string]string{
		c.PKI.CACert:           "<cluster ca.crt>",
		c.PKI.FrontProxyCACert: "<front-proxy ca.crt>",
		c.PKI.SAPub:            "<sa.pub>",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("parity: %w", err)
		}
		known[string(b)] = name
	}
	if id, ok := credentialID(c.RESTConfig); ok {
		known[id] = "<admin credential-id>"
	}
	return known, nil
}

// runSteps creates the nodes, applies the objects and runs every step,
// stopping at the first failure.
func (s *session) runSteps(ctx context.Context) error {
	if s.s.Nodes > 0 {
		s.logf("parity: creating %d nodes", s.s.Nodes)
		if err := s.steps.nodes(ctx, s.s.Nodes); err != nil {
			return err
		}
	}
	if len(s.s.Objects) > 0 {
		s.logf("parity: applying %d objects", len(s.s.Objects))
		if err := s.steps.apply(ctx, s.s.Objects); err != nil {
			return fmt.Errorf("objects: %w", err)
		}
		if err := s.afterStep(ctx, -1, nil); err != nil {
			return fmt.Errorf("objects: %w", err)
		}
	}
	for i := range s.s.Steps {
		st := &s.s.Steps[i]
		s.logf("parity: step %d: %s", i+1, st)
		start := time.Now()
		if err := s.steps.run(ctx, st); err != nil {
			return fmt.Errorf("step %d (%s) failed: %w", i+1, st, err)
		}
		s.logf("parity: step %d: done in %s", i+1, time.Since(start).Round(time.Millisecond))
		if err := s.afterStep(ctx, i, st); err != nil {
			return fmt.Errorf("after step %d (%s): %w", i+1, st, err)
		}
	}
	return nil
}

func (s *session) afterStep(ctx context.Context, i int, st *Step) error {
	if s.hook == nil {
		return nil
	}
	return s.hook.AfterStep(ctx, i, st)
}

// snapshot captures and normalises the current state once.
func (s *session) snapshot(ctx context.Context, notes ...string) (string, error) {
	c, err := s.cap.capture(ctx)
	if err != nil {
		return "", err
	}
	c.Notes = notes
	return s.norm.Normalize(c)
}

// settleAndCapture snapshots until the text has not changed for the quiet
// period and returns it; after the timeout it returns the last text and
// errUnsettled.
func (s *session) settleAndCapture(ctx context.Context, set *Settle) (string, error) {
	quiet, timeout := set.Quiet.or(DefaultSettleQuiet), set.Timeout.or(DefaultSettleTimeout)
	start := time.Now()
	var last string
	var lastErr error
	since := time.Now()
	for {
		text, err := s.snapshot(ctx)
		switch {
		case err != nil:
			lastErr = err
		case text != last || lastErr != nil:
			last, since, lastErr = text, time.Now(), nil
		case time.Since(since) >= quiet:
			s.logf("parity: settled after %s", time.Since(start).Round(time.Millisecond))
			return last, nil
		}
		if time.Since(start) > timeout {
			if lastErr != nil {
				return "", fmt.Errorf("capture: %w", lastErr)
			}
			return last, fmt.Errorf("%w within %s", errUnsettled, timeout)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(2 * pollInterval):
		}
	}
}
