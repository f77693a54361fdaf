package clientthrottle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
)

const (
	// Waits longer than these are logged, as client-go does.
	longWait      = 50 * time.Millisecond
	extraLongWait = time.Second
	reason        = "client-side throttling, not priority and fairness"
)

// InTransport returns a copy of cfg whose clients wait for cfg's QPS and
// burst in their transport: one token bucket per HTTP client built from
// the copy (a clientset shares one across its API groups, as client-go's
// own limiter). cfg is returned as it is when it has an explicit
// RateLimiter or no positive QPS and burst.
func InTransport(cfg *rest.Config) *rest.Config {
	if cfg.RateLimiter != nil || cfg.QPS <= 0 || cfg.Burst <= 0 {
		return cfg
	}
	qps, burst := cfg.QPS, cfg.Burst
	out := rest.CopyConfig(cfg)
	out.QPS = -1 // no limiter in client-go
	out.Burst = 0
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &roundTripper{next: next, limiter: newLimiter(qps, burst)}
	})
	return out
}

// newLimiter is client-go's limiter constructor; a test replaces it.
var newLimiter = flowcontrol.NewTokenBucketRateLimiter

type roundTripper struct {
	next    http.RoundTripper
	limiter flowcontrol.RateLimiter
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// client-go does not rate-limit watches.
	if isWatch(req) {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	start := time.Now()
	if err := t.limiter.Wait(ctx); err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("client rate limiter Wait returned an error: %w", err)
		}
		return nil, err
	}
	waited := time.Since(start)
	metrics.RateLimiterLatency.Observe(ctx, req.Method, *req.URL, waited)
	if waited > longWait {
		logWait(klog.FromContext(ctx), req, waited)
	}
	return t.next.RoundTrip(req)
}

// isWatch reports whether req has watch=true (or 1) among its parameters.
func isWatch(req *http.Request) bool {
	q := req.URL.RawQuery
	for q != "" {
		var param string
		param, q, _ = strings.Cut(q, "&")
		if param == "watch=true" || param == "watch=1" {
			return true
		}
	}
	return false
}

func logWait(logger klog.Logger, req *http.Request, waited time.Duration) {
	if l := logger.V(3); l.Enabled() {
		l.Info("Waited before sending request", "delay", waited, "reason", reason, "verb", req.Method, "URL", req.URL.String())
	}
	if waited > extraLongWait {
		if level, ok := longWaits.attempt(logger); ok {
			logger.V(level).Info("Waited before sending request", "delay", waited, "reason", reason, "verb", req.Method, "URL", req.URL.String())
		}
	}
}

// longWaits throttles the logging of waits over a second as client-go's
// global throttled logger: at level 2 at most every second, else at level
// 0 at most every ten seconds.
var longWaits = &throttledLog{levels: []throttledLevel{{level: 2, every: time.Second}, {level: 0, every: 10 * time.Second}}}

type throttledLog struct {
	mu     sync.Mutex
	levels []throttledLevel
}

type throttledLevel struct {
	level int
	every time.Duration
	last  time.Time
}

// attempt returns the level to log at, if the first level enabled for
// logger was not used within its interval.
func (t *throttledLog) attempt(logger klog.Logger) (int, bool) {
	for i := range t.levels {
		l := &t.levels[i]
		if !logger.V(l.level).Enabled() {
			continue
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if now := time.Now(); now.Sub(l.last) >= l.every {
			l.last = now
			return l.level, true
		}
		return 0, false
	}
	return 0, false
}
