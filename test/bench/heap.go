package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/test/cluster"
)

// heapInUseFigure names the per-phase figure: the controller manager's Go
// heap in use at the phase's end (go_memstats_heap_inuse_bytes, which both
// binaries expose), in MiB. Unlike RSS it does not include memory the
// runtime holds but no longer uses.
const heapInUseFigure = "heap in use MiB"

// controllerManagerGet GETs path from the controller manager's HTTPS
// endpoint with the admin's client certificate (authorised through the
// apiserver's SubjectAccessReview, as a scraper would be).
func controllerManagerGet(ctx context.Context, c *cluster.Cluster, path string) ([]byte, error) {
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.Host = "https://127.0.0.1:" + strconv.Itoa(c.ControllerManagerPort())
	// Its serving certificate is self-signed.
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.Insecure = nil, "", true
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return body, nil
}

// heapInUseMiB reads go_memstats_heap_inuse_bytes from /metrics.
func heapInUseMiB(ctx context.Context, c *cluster.Cluster) (float64, error) {
	body, err := controllerManagerGet(ctx, c, "/metrics")
	if err != nil {
		return 0, err
	}
	return parseHeapInUse(body)
}

func parseHeapInUse(body []byte) (float64, error) {
	s := bufio.NewScanner(bytes.NewReader(body))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), " ")
		if ok && name == "go_memstats_heap_inuse_bytes" {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return 0, err
			}
			return v / (1 << 20), nil
		}
	}
	return 0, fmt.Errorf("no go_memstats_heap_inuse_bytes in /metrics")
}

// saveHeapProfile writes the controller manager's heap profile
// (/debug/pprof/heap, served with --profiling, the default) to path, for
// `go tool pprof -sample_index=inuse_space`.
func saveHeapProfile(ctx context.Context, c *cluster.Cluster, path string) error {
	body, err := controllerManagerGet(ctx, c, "/debug/pprof/heap")
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
