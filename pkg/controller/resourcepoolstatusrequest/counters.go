package resourcepoolstatusrequest

import (
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// counters are quantities by counter set and counter name.
type counters map[string]map[string]resource.Quantity

// remainingCounters is the pool's shared counters less what its allocated
// devices consume (once per device, however many claims share it, as the
// scheduler counts).
func remainingCounters(sets []resourcev1.CounterSet, devices []deviceRecord, inUse map[string]struct{}) counters {
	out := counters{}
	for _, cs := range sets {
		m := out[cs.Name]
		if m == nil {
			m = map[string]resource.Quantity{}
			out[cs.Name] = m
		}
		for name, c := range cs.Counters {
			m[name] = c.Value.DeepCopy()
		}
	}
	for _, d := range devices {
		if _, used := inUse[d.name]; used {
			deduct(d.consumesCounters, out)
		}
	}
	return out
}

// fit reports whether avail covers a device's consumption; a counter avail
// does not have never fits.
func fit(cost []resourcev1.DeviceCounterConsumption, avail counters) bool {
	for _, cc := range cost {
		for name, c := range cc.Counters {
			have, ok := avail[cc.CounterSet][name]
			if !ok || have.Cmp(c.Value) < 0 {
				return false
			}
		}
	}
	return true
}

// deduct subtracts a device's consumption from avail, skipping counters
// avail does not have.
func deduct(cost []resourcev1.DeviceCounterConsumption, avail counters) {
	for _, cc := range cost {
		set := avail[cc.CounterSet]
		for name, c := range cc.Counters {
			if have, ok := set[name]; ok {
				have.Sub(c.Value)
				set[name] = have
			}
		}
	}
}

func cloneCounters(src counters) counters {
	out := make(counters, len(src))
	for set, m := range src {
		c := make(map[string]resource.Quantity, len(m))
		for name, q := range m {
			c[name] = q.DeepCopy()
		}
		out[set] = c
	}
	return out
}

// costKey identifies a device's consumption ("set/counter=quantity",
// sorted), to tell devices of one partition type with different costs.
func costKey(cost []resourcev1.DeviceCounterConsumption) string {
	var parts []string
	for _, cc := range cost {
		for name, c := range cc.Counters {
			parts = append(parts, cc.CounterSet+"/"+name+"="+c.Value.String())
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
