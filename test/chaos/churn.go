package chaos

import (
	"context"
	"math/rand"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// churnArgs make the apiserver end watches every 5-10 s, but only watches
// that name no timeout: the apiserver uses --min-request-timeout (times a
// random 1-2) only when the request has no timeoutSeconds, and client-go's
// reflectors always send one (5-10 min, minWatchTimeout). So the flag
// alone leaves every informer's watch open for minutes (measured: one
// watch per informer in a 20 s window); churn also cuts the controller
// manager's connections, which ends its watches for real.
var churnArgs = []string{"--min-request-timeout=5"}

// compactionArgs add etcd compaction every 5 s and no watch cache, so that
// a watch resumed from its last resourceVersion reaches etcd at a
// compacted revision and gets 410 Gone: the informer relists.
var compactionArgs = append(append([]string(nil), churnArgs...), "--etcd-compaction-interval=5s", "--watch-cache=false")

// churn puts the controller manager behind a toxiproxy proxy (as tcp
// does) and every seeded 5-10 s stops and starts the proxy: every
// connection is closed (FIN), as by a load balancer recycling them, so
// every watch ends and is re-established from its last resourceVersion;
// requests in flight at that moment fail and are retried. args are the
// apiserver flags (churnArgs or compactionArgs).
type churn struct {
	name string
	args []string
	seed int64
}

func (f *churn) Name() string { return f.name }

func (f *churn) Configure(o *cluster.Options) error {
	o.ExtraAPIServerArgs = append(append([]string(nil), o.ExtraAPIServerArgs...), f.args...)
	return nil
}

func (f *churn) Start(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	proxy, opts, err := behindProxy(ctx, c, logf)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &churnRun{c: c, proxy: proxy, opts: opts, logf: logf, cancel: cancel, done: make(chan struct{})}
	go r.loop(ctx, rand.New(rand.NewSource(f.seed)))
	return r, nil
}

type churnRun struct {
	c      *cluster.Cluster
	proxy  *toxiproxy.Proxy
	opts   cluster.ControllerManagerOptions
	logf   func(string, ...any)
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	cuts int
	err  error
}

func (r *churnRun) loop(ctx context.Context, rng *rand.Rand) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5*time.Second + time.Duration(rng.Int63n(int64(5*time.Second)))):
		}
		r.proxy.Stop()
		err := r.proxy.Start()
		r.mu.Lock()
		r.cuts++
		if err != nil {
			r.err = err
		}
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// End stops cutting and brings the controller manager back if it exited.
func (r *churnRun) End(ctx context.Context) error {
	r.cancel()
	<-r.done
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = ensureLeader(ctx, r.c, r.opts, r.logf)
	return err
}

func (r *churnRun) Close() error {
	r.proxy.Stop()
	return nil
}

func (r *churnRun) figures() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return map[string]float64{"cuts": float64(r.cuts)}
}
