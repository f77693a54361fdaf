package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// pollInterval is how often readiness conditions are checked.
const pollInterval = 100 * time.Millisecond

// condition reports whether something is ready; err explains why not yet and
// ends up in the timeout message.
type condition func(ctx context.Context) (ok bool, err error)

// waitFor polls cond until it holds, timeout passes, ctx ends, or p (if not
// nil) exits, whichever comes first.
func waitFor(ctx context.Context, timeout time.Duration, what string, p *process, cond condition) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if p != nil && p.exited() {
			return fmt.Errorf("waiting for %s: %w", what, p.exitError())
		}
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("cluster: %s: %w (last: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("cluster: %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// insecureHTTP is a client for health endpoints of local components whose
// self-signed serving certificates we do not verify.
func insecureHTTP() *http.Client {
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local health checks only
			DisableKeepAlives: true,
		},
	}
}

// httpOK is a condition: GET url answers 200.
func httpOK(client *http.Client, url string) condition {
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET %s: %d: %s", url, resp.StatusCode, body)
		}
		return true, nil
	}
}
