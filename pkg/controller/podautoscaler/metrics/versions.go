package metrics

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// knownCustomVersions are the custom metrics API versions this package
// reads, by their "group/version" string.
var knownCustomVersions = map[string]schema.GroupVersion{
	CustomV1beta2.String(): CustomV1beta2,
	CustomV1beta1.String(): CustomV1beta1,
}

// preferredVersion caches the custom metrics API version to use: the
// server's preferred one if known, else the first known one it lists.
type preferredVersion struct {
	disco discovery.DiscoveryInterface

	mu sync.Mutex
	gv *schema.GroupVersion
}

func (p *preferredVersion) get() (schema.GroupVersion, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gv != nil {
		return *p.gv, nil
	}
	groups, err := p.disco.ServerGroups()
	if err != nil {
		return schema.GroupVersion{}, err
	}
	for _, g := range groups.Groups {
		if g.Name != CustomGroup {
			continue
		}
		if gv, ok := knownCustomVersions[g.PreferredVersion.GroupVersion]; ok {
			p.gv = &gv
			return gv, nil
		}
		for _, v := range g.Versions {
			if gv, ok := knownCustomVersions[v.GroupVersion]; ok {
				p.gv = &gv
				return gv, nil
			}
		}
		return schema.GroupVersion{}, fmt.Errorf("no known available metric versions found")
	}
	return schema.GroupVersion{}, fmt.Errorf("no custom metrics API (%s) registered", CustomGroup)
}

func (p *preferredVersion) invalidate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gv = nil
}
