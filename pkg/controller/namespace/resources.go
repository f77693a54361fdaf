package namespace

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// discovered is what one discovery round tells the deleter: the namespaced
// resources it should empty, and which of them lack the list or
// deletecollection verb.
type discovered struct {
	// deletable are the resources that support delete.
	deletable map[schema.GroupVersionResource]struct{}
	// noList and noDeleteCollection hold resources whose discovery entry
	// lacks the verb; those operations are not attempted on them.
	noList, noDeleteCollection map[schema.GroupVersionResource]bool
}

// discoverResources runs discover and sorts the result. A discovery error
// (typically discovery.ErrGroupDiscoveryFailed for an unavailable
// aggregated API) comes with whatever partial list discovery returned, so
// that the rest of the namespace is still emptied; a GroupVersion that does
// not parse makes the resource set empty, as upstream's
// discovery.GroupVersionResources does.
func discoverResources(discover func() ([]*metav1.APIResourceList, error)) (d discovered, discoveryErr, parseErr error) {
	resources, discoveryErr := discover()
	d.noList = map[schema.GroupVersionResource]bool{}
	d.noDeleteCollection = map[schema.GroupVersionResource]bool{}
	for _, rl := range resources {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			gvr := gv.WithResource(r.Name)
			verbs := map[string]bool{}
			for _, v := range r.Verbs {
				verbs[v] = true
			}
			d.noList[gvr] = !verbs["list"]
			d.noDeleteCollection[gvr] = !verbs["deletecollection"]
		}
	}
	deletable := discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete"}}, resources)
	d.deletable, parseErr = discovery.GroupVersionResources(deletable)
	return d, discoveryErr, parseErr
}
