package clientthrottle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// countingLimiter counts Waits and never waits.
type countingLimiter struct {
	flowcontrol.RateLimiter
	qps   float32
	burst int
	mu    sync.Mutex
	waits int
}

func (l *countingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return nil
}

func (l *countingLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waits
}

type latencies struct {
	mu    sync.Mutex
	verbs []string
	hosts []string
}

func (l *latencies) Observe(_ context.Context, verb string, u url.URL, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.verbs = append(l.verbs, verb)
	l.hosts = append(l.hosts, u.Host)
}

func TestLimiterPerClientsetInTheTransport(t *testing.T) {
	var limiters []*countingLimiter
	newLimiter = func(qps float32, burst int) flowcontrol.RateLimiter {
		l := &countingLimiter{qps: qps, burst: burst}
		limiters = append(limiters, l)
		return l
	}
	t.Cleanup(func() { newLimiter = flowcontrol.NewTokenBucketRateLimiter })
	observed := &latencies{}
	saved := metrics.RateLimiterLatency
	metrics.RateLimiterLatency = observed
	t.Cleanup(func() { metrics.RateLimiterLatency = saved })

	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","items":[]}`))
	}))
	defer server.Close()

	cfg := InTransport(&rest.Config{Host: server.URL, QPS: 20, Burst: 30})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().Deployments("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := client.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-w.ResultChan()
	w.Stop()

	if len(limiters) != 1 {
		t.Fatalf("%d limiters for one clientset, want 1", len(limiters))
	}
	l := limiters[0]
	if l.qps != 20 || l.burst != 30 {
		t.Errorf("limiter %v QPS burst %d, want 20 and 30", l.qps, l.burst)
	}
	if n := l.count(); n != 2 {
		t.Errorf("%d waits for two lists and a watch, want 2 (watches are not limited)", n)
	}
	observed.mu.Lock()
	if len(observed.verbs) != 2 || observed.verbs[0] != "GET" || observed.hosts[0] != server.Listener.Addr().String() {
		t.Errorf("rate limiter latency observed for %v on %v, want GET twice on %s", observed.verbs, observed.hosts, server.Listener.Addr())
	}
	observed.mu.Unlock()

	// Another clientset from the same config has its own limiter.
	if _, err := kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if len(limiters) != 2 {
		t.Errorf("%d limiters for two clientsets, want 2", len(limiters))
	}
}

func TestInTransportLeavesOtherLimitsAlone(t *testing.T) {
	explicit := &rest.Config{QPS: 20, Burst: 30, RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter()}
	for name, cfg := range map[string]*rest.Config{
		"explicit limiter": explicit,
		"no QPS":           {Burst: 30},
		"negative QPS":     {QPS: -1},
		"no burst":         {QPS: 20},
	} {
		if got := InTransport(cfg); got != cfg {
			t.Errorf("%s: config changed", name)
		}
	}
	cfg := &rest.Config{QPS: 20, Burst: 30}
	got := InTransport(cfg)
	if got == cfg || cfg.QPS != 20 || cfg.WrapTransport != nil {
		t.Errorf("the given config was modified or returned")
	}
	if got.QPS >= 0 || got.WrapTransport == nil {
		t.Errorf("copy has QPS %v and wrapper %v: client-go would still limit", got.QPS, got.WrapTransport != nil)
	}
}

func TestIsWatch(t *testing.T) {
	for query, want := range map[string]bool{
		"watch=true": true,
		"resourceVersion=1&watch=true&timeout=5s": true,
		"watch=1":                             true,
		"watch=false":                         false,
		"labelSelector=watch%3Dtrue":          false,
		"":                                    false,
		"allowWatchBookmarks=true&watch=true": true,
		"allowWatchBookmarks=true&sendInitialEvents": false,
	} {
		req := &http.Request{URL: &url.URL{RawQuery: query}}
		if got := isWatch(req); got != want {
			t.Errorf("isWatch(%q) = %v, want %v", query, got, want)
		}
	}
}

func TestLongWaitsAreLoggedThrottled(t *testing.T) {
	log := &throttledLog{levels: []throttledLevel{{level: 0, every: time.Hour}}}
	logger := testLogger(t)
	if _, ok := log.attempt(logger); !ok {
		t.Fatal("first long wait not logged")
	}
	if _, ok := log.attempt(logger); ok {
		t.Fatal("second long wait within the interval logged")
	}
}

func testLogger(t *testing.T) klog.Logger {
	return ktesting.NewLogger(t, ktesting.NewConfig())
}

func TestRequestsWaitForTheBucket(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","items":[]}`))
	}))
	defer server.Close()
	client, err := kubernetes.NewForConfig(InTransport(&rest.Config{Host: server.URL, QPS: 20, Burst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 6 {
		if _, err := client.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// One token at once, then one every 50 ms: a lower bound only.
	if elapsed := time.Since(start); elapsed < 240*time.Millisecond {
		t.Errorf("6 requests at 20 QPS with burst 1 took %v, want at least 250ms", elapsed)
	}
}
