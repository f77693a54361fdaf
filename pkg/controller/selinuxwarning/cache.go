package selinuxwarning

import (
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Upstream's property names (the metric's "property" label and the Events'
// wording) and Event reasons.
const (
	propertyLabel  = "SELinuxLabel"
	propertyPolicy = "SELinuxChangePolicy"
	reasonLabel    = "SELinuxLabelConflict"
	reasonPolicy   = "SELinuxChangePolicyConflict"
)

// conflict is one direction of a conflict between two pods that use the
// same volume: the Event goes to Pod, and OtherPod is named in it only when
// both share a namespace. Each conflict is kept in both directions.
type conflict struct {
	Property   string // propertyLabel or propertyPolicy
	Pod        cache.ObjectName
	Value      string
	OtherPod   cache.ObjectName
	OtherValue string
}

// reason is the conflict Event's reason.
func (c conflict) reason() string {
	if c.Property == propertyPolicy {
		return reasonPolicy
	}
	return reasonLabel
}

// message is upstream's Event message, word for word: the other pod is named
// only in the same namespace, and the cross-namespace form has no space
// between the property and its quoted value, as upstream's.
func (c conflict) message() string {
	const tail = ". If both pods land on the same node, only one of them may access the volume."
	value, otherValue := `"`+c.Value+`"`, `"`+c.OtherValue+`"`
	if c.Pod.Namespace == c.OtherPod.Namespace {
		return c.Property + " " + value + " conflicts with pod " + c.OtherPod.Name +
			" that uses the same volume as this pod with " + c.Property + " " + otherValue + tail
	}
	return c.Property + value + " conflicts with another pod that uses the same volume as this pod with a different " +
		c.Property + tail
}

// usage is how one pod uses one volume.
type usage struct {
	label  string // the SELinux mount label; "" when not mounted with -o context
	parts  [4]string
	policy v1.PodSELinuxChangePolicy
}

func newUsage(label string, policy v1.PodSELinuxChangePolicy) usage {
	return usage{label: label, parts: labelParts(label), policy: policy}
}

// labelParts splits user:role:type:level; the level keeps its own colons
// (s0:c1,c2).
func labelParts(label string) [4]string {
	var p [4]string
	if label != "" {
		copy(p[:], strings.SplitN(label, ":", 4))
	}
	return p
}

// labelsConflict is upstream's comparison of two labels as the controller
// knows them (without the nodes' SELinux defaults): the levels must be
// equal; user, role and type conflict only when both are set and differ.
func labelsConflict(a, b [4]string) bool {
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		if i == 3 || (a[i] != "" && b[i] != "") {
			return true
		}
	}
	return false
}

// conflictsBetween returns the conflicts of pod's use u with other's use o
// of one volume, in both directions.
func conflictsBetween(pod cache.ObjectName, u usage, other cache.ObjectName, o usage) []conflict {
	var out []conflict
	pair := func(property, value, otherValue string) {
		out = append(out,
			conflict{Property: property, Pod: pod, Value: value, OtherPod: other, OtherValue: otherValue},
			conflict{Property: property, Pod: other, Value: otherValue, OtherPod: pod, OtherValue: value})
	}
	if u.policy != o.policy {
		pair(propertyPolicy, string(u.policy), string(o.policy))
	}
	if labelsConflict(u.parts, o.parts) {
		pair(propertyLabel, u.label, o.label)
	}
	return out
}

// trackedVolume is a volume and the pods that use it.
type trackedVolume struct {
	csiDriver string // "" for in-tree volumes
	pods      map[cache.ObjectName]usage
	conflicts []conflict // the current conflicts among pods, both directions
}

// volumeCache records which pods use which volume how, and the conflicts
// among them. It is safe for concurrent use (the metric collector reads
// it).
type volumeCache struct {
	mu      sync.RWMutex
	volumes map[v1.UniqueVolumeName]*trackedVolume
	byPod   map[cache.ObjectName]map[v1.UniqueVolumeName]struct{}
}

func newVolumeCache() *volumeCache {
	return &volumeCache{
		volumes: map[v1.UniqueVolumeName]*trackedVolume{},
		byPod:   map[cache.ObjectName]map[v1.UniqueVolumeName]struct{}{},
	}
}

// add records that pod uses volume with label and policy, and returns the
// conflicts that use causes now (to be reported as Events); nothing when
// the pod's use is unchanged since it was last added. csiDriver is kept
// from the volume's first use.
func (c *volumeCache) add(volume v1.UniqueVolumeName, pod cache.ObjectName, label string, policy v1.PodSELinuxChangePolicy, csiDriver string) []conflict {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := newUsage(label, policy)
	if c.byPod[pod] == nil {
		c.byPod[pod] = map[v1.UniqueVolumeName]struct{}{}
	}
	c.byPod[pod][volume] = struct{}{}
	vol := c.volumes[volume]
	if vol == nil {
		c.volumes[volume] = &trackedVolume{csiDriver: csiDriver, pods: map[cache.ObjectName]usage{pod: u}}
		return nil
	}
	if old, ok := vol.pods[pod]; ok && old == u {
		return nil
	}
	vol.pods[pod] = u
	var found []conflict
	for other, o := range vol.pods {
		if other != pod {
			found = append(found, conflictsBetween(pod, u, other, o)...)
		}
	}
	vol.conflicts = append(withoutPod(vol.conflicts, pod), found...)
	return found
}

// deletePod forgets pod and every conflict it was part of.
func (c *volumeCache) deletePod(pod cache.ObjectName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.byPod[pod] {
		vol := c.volumes[name]
		if vol == nil {
			continue
		}
		delete(vol.pods, pod)
		if len(vol.pods) == 0 {
			delete(c.volumes, name)
			continue
		}
		vol.conflicts = withoutPod(vol.conflicts, pod)
	}
	delete(c.byPod, pod)
}

// podsUsingDriver returns the pods that use a volume of the CSI driver.
func (c *volumeCache) podsUsingDriver(driver string) []cache.ObjectName {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []cache.ObjectName
	for _, vol := range c.volumes {
		if vol.csiDriver != driver {
			continue
		}
		for pod := range vol.pods {
			out = append(out, pod)
		}
	}
	return out
}

// conflicts returns every current conflict once (two volumes shared by
// the same two pods in the same way give one).
func (c *volumeCache) conflicts() []conflict {
	c.mu.RLock()
	defer c.mu.RUnlock()
	seen := map[conflict]struct{}{}
	var out []conflict
	for _, vol := range c.volumes {
		for _, k := range vol.conflicts {
			if _, dup := seen[k]; !dup {
				seen[k] = struct{}{}
				out = append(out, k)
			}
		}
	}
	return out
}

// withoutPod returns conflicts without those pod is part of, reusing the
// slice's array.
func withoutPod(conflicts []conflict, pod cache.ObjectName) []conflict {
	out := conflicts[:0]
	for _, k := range conflicts {
		if k.Pod != pod && k.OtherPod != pod {
			out = append(out, k)
		}
	}
	clear(conflicts[len(out):])
	return out
}
