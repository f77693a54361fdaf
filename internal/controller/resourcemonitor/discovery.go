package resourcemonitor

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
)

// Set is a set of resources.
type Set = map[schema.GroupVersionResource]struct{}

// Scope selects the resources Discover considers.
type Scope int

const (
	// AllScopes are namespaced and cluster-scoped resources.
	AllScopes Scope = iota
	// NamespacedOnly are the namespaced resources.
	NamespacedOnly
)

// Discover returns the server's preferred resources of scope that support
// every verb. On a partial discovery failure it returns what it could
// resolve along with the error (discovery.GroupDiscoveryFailedErrorGroups
// tells which groups failed).
func Discover(ctx context.Context, d discovery.ServerResourcesInterface, scope Scope, verbs ...string) (Set, error) {
	logger := klog.FromContext(ctx)
	var preferred []*metav1.APIResourceList
	var lookupErr error
	if scope == NamespacedOnly {
		preferred, lookupErr = d.ServerPreferredNamespacedResources()
	} else {
		preferred, lookupErr = d.ServerPreferredResources()
	}
	if lookupErr != nil {
		if failed, ok := discovery.GroupDiscoveryFailedErrorGroups(lookupErr); ok {
			logger.Info("failed to discover some groups", "groups", fmt.Sprintf("%q", failed))
		} else {
			logger.Info("failed to discover preferred resources", "error", lookupErr)
		}
	}
	out := Set{}
	if preferred == nil {
		return out, lookupErr
	}
	for _, rl := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: verbs}, preferred) {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			logger.Info("ignoring invalid discovered resource", "groupversion", rl.GroupVersion, "error", err)
			continue
		}
		for _, r := range rl.APIResources {
			out[gv.WithResource(r.Name)] = struct{}{}
		}
	}
	return out, lookupErr
}

// KeepFailedGroups adds to found the resources of old whose group version
// failed discovery (err, from Discover) and for which keep returns true: a
// group that is briefly unavailable does not lose its monitors.
func KeepFailedGroups(found, old Set, err error, keep func(schema.GroupVersionResource) bool) {
	failed, ok := discovery.GroupDiscoveryFailedErrorGroups(err)
	if !ok {
		return
	}
	for r := range old {
		if _, f := failed[r.GroupVersion()]; f && (keep == nil || keep(r)) {
			found[r] = struct{}{}
		}
	}
}

// Diff says which resources cur adds to old and which it removes.
func Diff(old, cur Set) string {
	removed, added := sets.New[string](), sets.New[string]()
	for r := range old {
		if _, ok := cur[r]; !ok {
			removed.Insert(r.String())
		}
	}
	for r := range cur {
		if _, ok := old[r]; !ok {
			added.Insert(r.String())
		}
	}
	return fmt.Sprintf("added: %v, removed: %v", sets.List(added), sets.List(removed))
}
