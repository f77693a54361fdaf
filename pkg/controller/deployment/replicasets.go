package deployment

import (
	"cmp"
	"slices"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Helpers over lists of ReplicaSets. The ReplicaSets are the cache's:
// nothing here modifies one, though some sort the slice they are given.

// replicas is rs.spec.replicas; a nil rs has none.
func replicas(rs *apps.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// filterActive returns the ReplicaSets with spec.replicas > 0.
func filterActive(rss []*apps.ReplicaSet) []*apps.ReplicaSet {
	var out []*apps.ReplicaSet
	for _, rs := range rss {
		if replicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// sum adds f over the non-nil ReplicaSets.
func sum(rss []*apps.ReplicaSet, f func(*apps.ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs)
		}
	}
	return n
}

func specReplicas(rss []*apps.ReplicaSet) int32 { return sum(rss, replicas) }
func statusReplicas(rss []*apps.ReplicaSet) int32 {
	return sum(rss, func(rs *apps.ReplicaSet) int32 { return rs.Status.Replicas })
}
func readyReplicas(rss []*apps.ReplicaSet) int32 {
	return sum(rss, func(rs *apps.ReplicaSet) int32 { return rs.Status.ReadyReplicas })
}
func availableReplicas(rss []*apps.ReplicaSet) int32 {
	return sum(rss, func(rs *apps.ReplicaSet) int32 { return rs.Status.AvailableReplicas })
}

// terminatingReplicas sums status.terminatingReplicas, or is nil when a
// ReplicaSet that its controller already observed does not report it
// (an older or gated-off replicaset-controller): the total is unknown then.
func terminatingReplicas(rss []*apps.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil:
		case rs.Status.TerminatingReplicas != nil:
			n += *rs.Status.TerminatingReplicas
		case rs.Status.ObservedGeneration != 0:
			return nil
		}
	}
	return &n
}

// byCreation orders oldest first, names breaking ties.
func byCreation(a, b *apps.ReplicaSet) int {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return cmp.Compare(a.Name, b.Name)
	}
	if a.CreationTimestamp.Before(&b.CreationTimestamp) {
		return -1
	}
	return 1
}

// bySizeOlder orders largest first, older first among equals: the order in
// which to take replicas away.
func bySizeOlder(a, b *apps.ReplicaSet) int {
	if c := cmp.Compare(replicas(b), replicas(a)); c != 0 {
		return c
	}
	return byCreation(a, b)
}

// bySizeNewer orders largest first, newer first among equals: the order in
// which to hand replicas out.
func bySizeNewer(a, b *apps.ReplicaSet) int {
	if c := cmp.Compare(replicas(b), replicas(a)); c != 0 {
		return c
	}
	return byCreation(b, a)
}

// equalIgnoreHash reports whether two pod templates are semantically equal
// apart from the pod-template-hash label.
func equalIgnoreHash(a, b *v1.PodTemplateSpec) bool {
	if !labelsEqualIgnoring(a.Labels, b.Labels, apps.DefaultDeploymentUniqueLabelKey) {
		return false
	}
	// Shallow copies: only the label maps are swapped out.
	ac, bc := *a, *b
	ac.Labels, bc.Labels = nil, nil
	return equality.Semantic.DeepEqual(ac, bc)
}

func labelsEqualIgnoring(a, b map[string]string, ignored string) bool {
	n := 0
	for k, v := range a {
		if k == ignored {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b {
		if k != ignored {
			n--
		}
	}
	return n == 0
}

// findNewReplicaSet returns the oldest ReplicaSet whose template equals
// the Deployment's; rsList ends up sorted oldest first.
func findNewReplicaSet(d *apps.Deployment, rsList []*apps.ReplicaSet) *apps.ReplicaSet {
	slices.SortFunc(rsList, byCreation)
	for _, rs := range rsList {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// splitReplicaSets returns the new ReplicaSet (nil if there is none yet)
// and all the others, oldest first.
func splitReplicaSets(d *apps.Deployment, rsList []*apps.ReplicaSet) (*apps.ReplicaSet, []*apps.ReplicaSet) {
	newRS := findNewReplicaSet(d, rsList)
	var old []*apps.ReplicaSet
	for _, rs := range rsList {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
		}
	}
	return newRS, old
}

// activeOrLatest returns the one ReplicaSet to scale when at most one has
// replicas: that one, or, with none, the new one or else the newest old
// one. It returns nil when several are active. oldRSs ends up sorted
// newest first.
func activeOrLatest(newRS *apps.ReplicaSet, oldRSs []*apps.ReplicaSet) *apps.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	slices.SortFunc(oldRSs, func(a, b *apps.ReplicaSet) int { return byCreation(b, a) })
	active := filterActive(append(slices.Clip(oldRSs), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return oldRSs[0]
	case 1:
		return active[0]
	default:
		return nil
	}
}
