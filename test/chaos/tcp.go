package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// The tcp fault's schedule, from the moment it starts.
const (
	tcpLatency       = 50 // ms, on every response byte stream throughout
	tcpJitter        = 50 // ms
	tcpResets        = 3  // reset_peer windows
	tcpResetWindow   = 500 * time.Millisecond
	tcpBlackhole     = 30 * time.Second
	tcpBlackholeFrom = 15 * time.Second
)

// tcp puts toxiproxy, in this process, between the controller manager and
// the apiserver. Only the controller manager goes through it: the
// harness, the scheduler and kwok talk to the apiserver directly.
//
// Schedule: latency 50±50 ms from the start; a reset_peer window (every
// connection that receives data in it is reset) at a seeded 1-4 s; the
// blackhole (toxiproxy's timeout toxic with timeout 0 both ways: bytes are
// swallowed, connections stay open) from 15 s for 30 s; then two more reset
// windows 2-4 s apart. The 30 s blackhole outlasts the Lease's renew
// deadline (10 s), so both binaries lose the Lease and exit; once the
// blackhole is over the controller manager is started again, through the
// proxy, as a kubelet would. The blackhole starts at 15 s, not sooner:
// upstream's binary needs several seconds after it leads before its
// controllers act, and at 8 s (tried first) its control run lost the Lease
// before making a namespace's default ServiceAccount, then waited out the
// Lease again, past the scenario step's 60 s wait.
type tcp struct{ seed int64 }

func (*tcp) Name() string { return "tcp" }

func (*tcp) Configure(*cluster.Options) error { return nil }

// Start starts the proxy and moves the controller manager behind it: it is
// stopped (SIGTERM) and started again with --kubeconfig naming a copy of
// its kubeconfig whose server is the proxy (a later flag wins). This
// happens before the scenario's objects exist.
func (t *tcp) Start(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	proxy, opts, err := behindProxy(ctx, c, logf)
	if err != nil {
		return nil, err
	}
	r := &tcpRun{c: c, proxy: proxy, opts: opts, logf: logf, rng: rand.New(rand.NewSource(t.seed)), done: make(chan struct{})}
	if err := r.add("latency", "downstream", fmt.Sprintf(`{"latency": %d, "jitter": %d}`, tcpLatency, tcpJitter)); err != nil {
		proxy.Stop()
		return nil, err
	}
	go r.schedule(ctx)
	return r, nil
}

// behindProxy starts a toxiproxy proxy on 127.0.0.1 in front of the
// apiserver and restarts the controller manager (SIGTERM, then started
// again and waited for until it leads) with --kubeconfig naming a copy of
// its kubeconfig whose server is the proxy (a later flag wins). It returns
// the proxy and the options the controller manager now runs with. The
// harness, the scheduler and kwok keep talking to the apiserver directly.
func behindProxy(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (*toxiproxy.Proxy, cluster.ControllerManagerOptions, error) {
	opts := c.Options().ControllerManager
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	u, err := url.Parse(c.APIServerURL)
	if err != nil {
		return nil, opts, err
	}
	proxy := toxiproxy.NewProxy(srv, "kcm-apiserver", "127.0.0.1:0", u.Host)
	if err := proxy.Start(); err != nil {
		return nil, opts, fmt.Errorf("chaos: proxy: %w", err)
	}
	conf := filepath.Join(c.WorkDir, "controller-manager-proxied.conf")
	err = proxiedKubeconfig(c.ControllerManagerKubeconfig, conf, "https://"+proxy.Listen)
	opts.ExtraArgs = append(append([]string(nil), opts.ExtraArgs...), "--kubeconfig="+conf)
	if err == nil {
		logf("chaos: proxy %s -> %s; moving the controller manager behind it", proxy.Listen, u.Host)
		err = c.StopControllerManager()
	}
	if err == nil {
		err = c.StartControllerManagerWith(ctx, opts)
	}
	if err == nil {
		err = c.WaitForControllerManagerLeader(ctx)
	}
	if err != nil {
		proxy.Stop()
		return nil, opts, err
	}
	return proxy, opts, nil
}

// proxiedKubeconfig writes a copy of the kubeconfig at src whose clusters
// name server instead.
func proxiedKubeconfig(src, dst, server string) error {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return fmt.Errorf("chaos: tcp: %w", err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
	}
	if err := clientcmd.WriteToFile(*cfg, dst); err != nil {
		return fmt.Errorf("chaos: tcp: %w", err)
	}
	return nil
}

type tcpRun struct {
	c     *cluster.Cluster
	proxy *toxiproxy.Proxy
	opts  cluster.ControllerManagerOptions
	logf  func(string, ...any)
	rng   *rand.Rand
	done  chan struct{}

	mu      sync.Mutex
	err     error
	resets  int
	blacked time.Duration
	revived float64 // times the controller manager was started again
}

// add adds a toxic (attributes as JSON) to every new and open link.
func (r *tcpRun) add(typ, stream, attrs string) error {
	body := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": 1, "attributes": %s}`, typ+"-"+stream, typ, stream, attrs)
	if _, err := r.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("chaos: tcp: add %s: %w", typ, err)
	}
	return nil
}

func (r *tcpRun) remove(ctx context.Context, typ, stream string) error {
	if err := r.proxy.Toxics.RemoveToxic(ctx, typ+"-"+stream); err != nil {
		return fmt.Errorf("chaos: tcp: remove %s: %w", typ, err)
	}
	return nil
}

// schedule runs the resets and the blackhole; End waits for it.
func (r *tcpRun) schedule(ctx context.Context) {
	defer close(r.done)
	start := time.Now()
	fail := func(err error) {
		r.mu.Lock()
		r.err = errors.Join(r.err, err)
		r.mu.Unlock()
	}
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			fail(ctx.Err())
			return false
		case <-time.After(d):
			return true
		}
	}
	reset := func() bool {
		if err := r.add("reset_peer", "downstream", `{"timeout": 0}`); err != nil {
			fail(err)
			return false
		}
		ok := sleep(tcpResetWindow)
		if err := r.remove(context.Background(), "reset_peer", "downstream"); err != nil {
			fail(err)
			return false
		}
		r.mu.Lock()
		r.resets++
		n := r.resets
		r.mu.Unlock()
		r.logf("chaos: tcp: reset window %d at %s", n, time.Since(start).Round(time.Millisecond))
		return ok
	}
	if !sleep(time.Second+time.Duration(r.rng.Int63n(int64(3*time.Second)))) || !reset() {
		return
	}
	if !sleep(time.Until(start.Add(tcpBlackholeFrom))) {
		return
	}
	r.logf("chaos: tcp: blackhole for %s", tcpBlackhole)
	for _, s := range []string{"upstream", "downstream"} {
		if err := r.add("timeout", s, `{"timeout": 0}`); err != nil {
			fail(err)
			return
		}
	}
	ok := sleep(tcpBlackhole)
	for _, s := range []string{"upstream", "downstream"} {
		if err := r.remove(context.Background(), "timeout", s); err != nil {
			fail(err)
		}
	}
	r.mu.Lock()
	r.blacked = tcpBlackhole
	r.mu.Unlock()
	r.logf("chaos: tcp: blackhole over")
	// As a kubelet would, start the controller manager again at once if
	// the blackhole cost it the Lease, rather than at End: the scenario's
	// steps may still be waiting for it.
	if !r.revive(ctx) {
		return
	}
	for i := 1; ok && i < tcpResets; i++ {
		ok = sleep(2*time.Second+time.Duration(r.rng.Int63n(int64(2*time.Second)))) && reset()
	}
}

// End waits for the schedule, removes the latency, and brings the
// controller manager back (behind the proxy) if it lost the Lease and
// exited.
func (r *tcpRun) End(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if err := r.remove(ctx, "latency", "downstream"); err != nil {
		return err
	}
	if !r.revive(ctx) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.err
	}
	return nil
}

// revive starts the controller manager again if it exited, and counts it.
func (r *tcpRun) revive(ctx context.Context) bool {
	restarted, err := ensureLeader(ctx, r.c, r.opts, r.logf)
	r.mu.Lock()
	defer r.mu.Unlock()
	if restarted {
		r.revived++
	}
	if err != nil {
		r.err = errors.Join(r.err, err)
		return false
	}
	return true
}

// Close stops the proxy (the controller manager behind it stops with the
// cluster right after).
func (r *tcpRun) Close() error {
	r.proxy.Stop()
	return nil
}

func (r *tcpRun) figures() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return map[string]float64{"resets": float64(r.resets), "blackhole-s": r.blacked.Seconds(), "kcm-restarted": r.revived}
}
