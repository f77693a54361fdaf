package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// ScaleCurve is the scale phases' cost per 1,000 pods and per 1,000 nodes
// at each size the results cover (one invocation per --scale-nodes), per
// QPS setting, phase and binary, so that growth with size shows: a cost
// per pod that rises with the size grows faster than linearly. Pods are
// the envelope's 30 per node. Only phases that ran (ok or timed out) count;
// "all" sums a run's phases (its peak RSS is the highest of them).
func ScaleCurve(results []*Results) string {
	type key struct {
		qps, phase, binary string
		nodes              int
	}
	type cost struct {
		cpu          float64
		requests     int
		peakRSSBytes int64
	}
	costs := map[key]cost{}
	var phaseOrder []string
	seen := map[string]bool{}
	for _, res := range results {
		nodes := res.Config.Params.ScaleNodes
		if nodes == 0 {
			nodes = defaultScaleNodes
		}
		for _, run := range res.Runs {
			if run.Scenario != ScenarioScale {
				continue
			}
			for _, p := range run.Phases {
				if !p.measured() {
					continue
				}
				if !seen[p.Name] {
					seen[p.Name] = true
					phaseOrder = append(phaseOrder, p.Name)
				}
				for _, name := range []string{p.Name, "all"} {
					k := key{run.QPS, name, run.Binary, nodes}
					c := costs[k]
					c.cpu += p.Process.CPUSeconds
					c.requests += p.Requests.Total
					c.peakRSSBytes = max(c.peakRSSBytes, p.Process.PeakRSSBytes)
					costs[k] = c
				}
			}
		}
	}
	phaseOrder = append(phaseOrder, "all")
	rank := map[string]int{}
	for i, p := range phaseOrder {
		rank[p] = i
	}
	keys := make([]key, 0, len(costs))
	for k := range costs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.qps != b.qps:
			return a.qps < b.qps
		case a.phase != b.phase:
			return rank[a.phase] < rank[b.phase]
		case a.binary != b.binary:
			return a.binary > b.binary // upstream before ours
		}
		return a.nodes < b.nodes
	})
	var b strings.Builder
	b.WriteString("| QPS | phase | binary | nodes | pods | CPU s / 1,000 pods | requests / 1,000 pods | requests / 1,000 nodes | peak RSS MiB / 1,000 pods |\n")
	b.WriteString("| --- | --- | --- | --: | --: | --: | --: | --: | --: |\n")
	for _, k := range keys {
		c := costs[k]
		pods := float64(k.nodes * scalePodsPerNode)
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %.2f | %.0f | %.0f | %.1f |\n",
			k.qps, k.phase, k.binary, k.nodes, k.nodes*scalePodsPerNode,
			c.cpu/pods*1000, float64(c.requests)/pods*1000, float64(c.requests)/float64(k.nodes)*1000,
			float64(c.peakRSSBytes)/(1<<20)/pods*1000)
	}
	return b.String()
}

// ReadResults reads an invocation's results.json.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
