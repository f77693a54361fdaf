package parity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/test/cluster"
)

// Family is what the metrics check compares of one metric family on
// /metrics: its type, help text (with the stability level component-base
// puts in front) and label names. Values are not compared.
type Family struct {
	Type   string   `json:"type"`
	Help   string   `json:"help"`
	Labels []string `json:"labels,omitempty"`
}

// Families are a binary's metric families by name.
type Families map[string]Family

// scrapeFamilies reads the controller manager's /metrics as the cluster's
// admin (a client certificate its delegated authentication accepts) and
// returns its families and the text it parsed them from.
func scrapeFamilies(ctx context.Context, c *cluster.Cluster) (Families, []byte, error) {
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.Host = "https://127.0.0.1:" + strconv.Itoa(c.Ports.ControllerManager)
	// The serving certificate is the controller manager's self-signed one.
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.Insecure = nil, "", true
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("metrics: GET /metrics: %s: %.512s", resp.Status, body)
	}
	f, err := parseFamilies(bytes.NewReader(body))
	return f, body, err
}

// parseFamilies parses the Prometheus text format.
func parseFamilies(r io.Reader) (Families, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: parse: %w", err)
	}
	out := make(Families, len(parsed))
	for name, mf := range parsed {
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		out[name] = Family{Type: familyType(mf.GetType()), Help: mf.GetHelp(), Labels: slices.Sorted(maps.Keys(labels))}
	}
	return out, nil
}

// writeFamilies keeps a run's families (<prefix>.metrics.json) and the
// scraped text (<prefix>.metrics.txt, values included) beside its capture.
func writeFamilies(prefix string, f Families, text []byte) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".metrics.json", data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(prefix+".metrics.txt", text, 0o644)
}

func familyType(t dto.MetricType) string { return strings.ToLower(t.String()) }

// merge adds other's families to f, the union of their label names where
// both have a family.
func (f Families) merge(other Families) {
	for name, fam := range other {
		have, ok := f[name]
		if !ok {
			f[name] = fam
			continue
		}
		labels := map[string]bool{}
		for _, l := range append(have.Labels, fam.Labels...) {
			labels[l] = true
		}
		have.Labels = slices.Sorted(maps.Keys(labels))
		f[name] = have
	}
}

// CompareFamilies returns one line per difference between upstream's
// families and ours that allow does not explain: a family only one side
// exposes, or one whose type, help or label names differ. allow maps a
// family name to the reason its difference is expected.
func CompareFamilies(upstream, ours Families, allow map[string]string) []string {
	var diffs []string
	names := map[string]bool{}
	for n := range upstream {
		names[n] = true
	}
	for n := range ours {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if _, ok := allow[n]; ok {
			continue
		}
		u, inU := upstream[n]
		o, inO := ours[n]
		switch {
		case !inO:
			diffs = append(diffs, fmt.Sprintf("%s: only upstream exposes it (%s, labels %v)", n, u.Type, u.Labels))
		case !inU:
			diffs = append(diffs, fmt.Sprintf("%s: only kcm exposes it (%s, labels %v)", n, o.Type, o.Labels))
		default:
			if u.Type != o.Type {
				diffs = append(diffs, fmt.Sprintf("%s: type %s upstream, %s kcm", n, u.Type, o.Type))
			}
			if u.Help != o.Help {
				diffs = append(diffs, fmt.Sprintf("%s: help %q upstream, %q kcm", n, u.Help, o.Help))
			}
			if !slices.Equal(u.Labels, o.Labels) {
				diffs = append(diffs, fmt.Sprintf("%s: labels %v upstream, %v kcm", n, u.Labels, o.Labels))
			}
		}
	}
	return diffs
}

// MetricsReport compares the metric families the two runs of each scenario
// exposed at its end: per scenario for those marked metricFamilies (an
// idle controller manager), and the union over all of them (families
// that appear only once a controller has worked): upstream's against kcm's,
// or against upstream's second run with selfCheck. It returns the
// unexplained differences and how many scenarios it compared.
func MetricsReport(results []Result, selfCheck bool) (diffs []string, compared int) {
	first, second := labelUpstream, labelOurs
	if selfCheck {
		second = labelUpstream2
	}
	union := map[string]Families{first: {}, second: {}}
	for _, r := range results {
		a, b := r.Metrics[first], r.Metrics[second]
		if a == nil || b == nil {
			continue
		}
		compared++
		union[first].merge(a)
		union[second].merge(b)
		if r.Scenario.MetricFamilies {
			for _, d := range CompareFamilies(a, b, MetricsAllowlist) {
				diffs = append(diffs, r.Scenario.Name+": "+d)
			}
		}
	}
	if compared > 0 {
		for _, d := range CompareFamilies(union[first], union[second], MetricsAllowlist) {
			diffs = append(diffs, fmt.Sprintf("all %d scenarios: %s", compared, d))
		}
	}
	sort.Strings(diffs)
	return diffs, compared
}
