package endpointslice

import (
	"fmt"
	"math"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// overloadThreshold is how far above its share of endpoints (by allocatable
// CPU) a zone may be expected to serve before hints are redistributed or
// given up.
const overloadThreshold = 0.2

// Messages of the TopologyAwareHints Events, upstream's.
const (
	msgNoZoneSpecified                 = "One or more endpoints do not have a zone specified"
	msgNoAllocatedHintsForZones        = "No hints allocated for zones"
	msgHintsEnabled                    = "Topology Aware Hints has been enabled"
	msgHintsDisabled                   = "Topology Aware Hints has been disabled"
	msgInsufficientNodeInfo            = "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes"
	msgNodesReadyInOneZoneOnly         = "Nodes only ready in one zone"
	msgInsufficientNumberOfEndpoints   = "Insufficient number of endpoints"
	msgMinAllocationExceedsOverloadThr = "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold"

	reasonHintsEnabled  = "TopologyAwareHintsEnabled"
	reasonHintsDisabled = "TopologyAwareHintsDisabled"
)

// event is an Event to record on the Service after its slices were written.
type event struct{ eventType, reason, message string }

func withAddressType(msg string, t discovery.AddressType) string {
	return fmt.Sprintf("%s, addressType: %s", msg, t)
}

// zoneCounts is a number of endpoints (or hints) per zone.
type zoneCounts map[string]int

// allocation is what a zone should get: at least minimum, at most
// maximum, ideally desired endpoints.
type allocation struct {
	minimum, maximum int
	desired          float64
}

// topologyCache keeps the zones' shares of allocatable CPU (from ready
// nodes) and, per Service and address type, the hints it gave, for
// topology-mode Auto (upstream's TopologyCache).
type topologyCache struct {
	mu sync.Mutex
	// ratios is each zone's share of the CPU; nil while the node
	// information does not allow hints.
	ratios    map[string]float64
	hints     map[string]map[discovery.AddressType]zoneCounts
	populated sets.Set[string]
}

func newTopologyCache() *topologyCache {
	// Empty, not nil, until nodes are known: upstream then says "Nodes
	// only ready in one zone".
	return &topologyCache{ratios: map[string]float64{}, hints: map[string]map[discovery.AddressType]zoneCounts{}, populated: sets.New[string]()}
}

// setNodes recomputes the zones' CPU shares from the nodes: ready ones
// without a control-plane role. A node without a zone or CPU voids them,
// as do fewer than two zones.
func (t *topologyCache) setNodes(logger klog.Logger, nodes []*v1.Node) {
	cpuByZone := map[string]*resource.Quantity{}
	sufficient := true
	total := resource.Quantity{}
	for _, node := range nodes {
		if excludedFromTopology(node.Labels) {
			logger.V(6).Info("Ignoring node because it has an excluded label", "node", klog.KObj(node))
			continue
		}
		if !nodeReady(node) {
			logger.V(6).Info("Ignoring node because it is not ready", "node", klog.KObj(node))
			continue
		}
		cpu := node.Status.Allocatable.Cpu()
		zone, ok := node.Labels[v1.LabelTopologyZone]
		if !ok || zone == "" || cpu.IsZero() {
			cpuByZone = map[string]*resource.Quantity{}
			sufficient = false
			logger.Info("Can't get CPU or zone information for node", "node", klog.KObj(node))
			break
		}
		total.Add(*cpu)
		if q, ok := cpuByZone[zone]; ok {
			q.Add(*cpu)
		} else {
			cpuByZone[zone] = cpu
		}
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if total.IsZero() || !sufficient || len(cpuByZone) < 2 {
		logger.V(2).Info("Insufficient node info for topology hints", "totalZones", len(cpuByZone), "totalCPU", total.String(), "sufficientNodeInfo", sufficient)
		t.ratios = nil
		return
	}
	t.ratios = make(map[string]float64, len(cpuByZone))
	for zone, cpu := range cpuByZone {
		t.ratios[zone] = float64(cpu.MilliValue()) / float64(total.MilliValue())
	}
}

// excludedFromTopology reports whether a node's labels keep it out of the
// CPU shares (control-plane nodes).
func excludedFromTopology(labels map[string]string) bool {
	_, cp := labels["node-role.kubernetes.io/control-plane"]
	_, master := labels["node-role.kubernetes.io/master"]
	return cp || master
}

func nodeReady(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// allocations returns each zone's allocation of n ready endpoints, or the
// Event that says why hints cannot be given.
func (t *topologyCache) allocations(n int) (map[string]allocation, *event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	disabled := func(msg string) *event { return &event{v1.EventTypeWarning, reasonHintsDisabled, msg} }
	switch {
	case t.ratios == nil:
		return nil, disabled(msgInsufficientNodeInfo)
	case len(t.ratios) < 2:
		return nil, disabled(msgNodesReadyInOneZoneOnly)
	case len(t.ratios) > n:
		return nil, disabled(fmt.Sprintf("%s (%d endpoints, %d zones)", msgInsufficientNumberOfEndpoints, n, len(t.ratios)))
	}
	out := make(map[string]allocation, len(t.ratios))
	minTotal := 0
	for zone, ratio := range t.ratios {
		desired := ratio * float64(n)
		minimum := int(math.Ceil(desired * (1 / (1 + overloadThreshold))))
		out[zone] = allocation{minimum: minimum, desired: math.Max(desired, float64(minimum))}
		minTotal += minimum
	}
	if minTotal > n {
		return nil, disabled(fmt.Sprintf("%s (%d endpoints, %d zones)", msgMinAllocationExceedsOverloadThr, n, len(t.ratios)))
	}
	for zone, a := range out {
		a.maximum = a.minimum + n - minTotal
		out[zone] = a
	}
	return out, nil
}

// setHints records the hints given to a Service's slices of one type.
func (t *topologyCache) setHints(serviceKey string, addressType discovery.AddressType, counts zoneCounts) (wasPopulated bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	wasPopulated = t.populated.Has(serviceKey)
	if t.hints[serviceKey] == nil {
		t.hints[serviceKey] = map[discovery.AddressType]zoneCounts{}
	}
	t.hints[serviceKey][addressType] = counts
	t.populated.Insert(serviceKey)
	return wasPopulated
}

// removeHints forgets a Service's hints of one type, and that it has any.
func (t *topologyCache) removeHints(serviceKey string, addressType discovery.AddressType) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if byType, ok := t.hints[serviceKey]; ok {
		delete(byType, addressType)
		if len(byType) == 0 {
			delete(t.hints, serviceKey)
		}
	}
	t.populated.Delete(serviceKey)
}

func (t *topologyCache) hasPopulatedHints(serviceKey string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.populated.Has(serviceKey)
}

// overloadedServices returns the Services whose hints leave some zone
// below its minimum share under the current CPU shares.
func (t *topologyCache) overloadedServices() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for key, byType := range t.hints {
		for _, counts := range byType {
			if overloaded(counts, t.ratios) {
				out = append(out, key)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func overloaded(counts zoneCounts, ratios map[string]float64) bool {
	if len(counts) == 0 {
		return false
	}
	if len(ratios) == 0 {
		return true
	}
	total := 0.0
	for _, n := range counts {
		total += float64(n)
	}
	for zone, ratio := range ratios {
		n, ok := counts[zone]
		if !ok {
			return true
		}
		if n < int(math.Ceil(total*ratio*(1/(1+overloadThreshold)))) {
			return true
		}
	}
	return false
}
