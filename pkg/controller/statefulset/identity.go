package statefulset

import (
	"maps"
	"strconv"
	"strings"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

// A StatefulSet's pods have stable identities: the pod of ordinal n is
// named <set>-<n>, its hostname is its name, its subdomain the set's
// serviceName, and its claims are named <template>-<set>-<n>.

// parentAndOrdinal returns the name of the set a pod's name says it
// belongs to and its ordinal: the name is <parent>-<digits> (upstream's
// regular expression "(.*)-([0-9]+)$"). It returns "" and -1 when the name
// has no such suffix, and -1 for an ordinal that does not fit an int32.
func parentAndOrdinal(pod *v1.Pod) (string, int) {
	name := pod.Name
	dash := strings.LastIndexByte(name, '-')
	digits := name[dash+1:]
	if dash < 0 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", -1
	}
	ordinal := -1
	if i, err := strconv.ParseInt(digits, 10, 32); err == nil {
		ordinal = int(i)
	}
	return name[:dash], ordinal
}

// ordinalOf returns the pod's ordinal, or -1.
func ordinalOf(pod *v1.Pod) int {
	_, ordinal := parentAndOrdinal(pod)
	return ordinal
}

// startOrdinal is the first ordinal of set's pods: spec.ordinals.start, or 0.
func startOrdinal(set *apps.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

// endOrdinal is the last ordinal of set's pods (inclusive).
func endOrdinal(set *apps.StatefulSet) int {
	return startOrdinal(set) + int(*set.Spec.Replicas) - 1
}

// inOrdinalRange reports whether the pod's ordinal is one set wants.
func inOrdinalRange(pod *v1.Pod, set *apps.StatefulSet) bool {
	o := ordinalOf(pod)
	return o >= startOrdinal(set) && o <= endOrdinal(set)
}

func podName(set *apps.StatefulSet, ordinal int) string {
	return set.Name + "-" + strconv.Itoa(ordinal)
}

func claimName(set *apps.StatefulSet, template *v1.PersistentVolumeClaim, ordinal int) string {
	return template.Name + "-" + set.Name + "-" + strconv.Itoa(ordinal)
}

// isMemberOf reports whether the pod's name makes it one of set's.
func isMemberOf(set *apps.StatefulSet, pod *v1.Pod) bool {
	parent, _ := parentAndOrdinal(pod)
	return parent == set.Name
}

// identityMatches reports whether the pod has the name, namespace and
// pod-name label of a member of set.
func identityMatches(set *apps.StatefulSet, pod *v1.Pod) bool {
	parent, ordinal := parentAndOrdinal(pod)
	return ordinal >= 0 &&
		parent == set.Name &&
		pod.Name == podName(set, ordinal) &&
		pod.Namespace == set.Namespace &&
		pod.Labels[apps.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches reports whether the pod mounts, for every claim template
// of set, a volume of the template's name backed by the pod's claim.
func storageMatches(set *apps.StatefulSet, pod *v1.Pod) bool {
	ordinal := ordinalOf(pod)
	if ordinal < 0 {
		return false
	}
	volumes := make(map[string]v1.Volume, len(pod.Spec.Volumes))
	for _, vol := range pod.Spec.Volumes {
		volumes[vol.Name] = vol
	}
	for i := range set.Spec.VolumeClaimTemplates {
		tmpl := &set.Spec.VolumeClaimTemplates[i]
		vol, ok := volumes[tmpl.Name]
		if !ok || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != claimName(set, tmpl, ordinal) {
			return false
		}
	}
	return true
}

// claimsFor returns the claims the pod should have, one per claim
// template in the set's order: the template with the pod's claim name,
// the set's namespace, and the set's selector's matchLabels added to (or,
// without labels, as) its labels.
func claimsFor(set *apps.StatefulSet, pod *v1.Pod) []v1.PersistentVolumeClaim {
	ordinal := ordinalOf(pod)
	claims := make([]v1.PersistentVolumeClaim, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		claim := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		claim.Name = claimName(set, claim, ordinal)
		claim.Namespace = set.Namespace
		if claim.Labels != nil {
			for k, v := range set.Spec.Selector.MatchLabels {
				claim.Labels[k] = v
			}
		} else {
			claim.Labels = maps.Clone(set.Spec.Selector.MatchLabels)
		}
		claims[i] = *claim
	}
	return claims
}

// updateStorage makes the pod's volumes mount its claims: one volume per
// claim template, named after the template, in place of any volume of
// that name, followed by the pod's other volumes. (Upstream orders the
// claims' volumes at random; here they follow the templates.)
func updateStorage(set *apps.StatefulSet, pod *v1.Pod) {
	claims := claimsFor(set, pod)
	templates := make(map[string]bool, len(claims))
	volumes := make([]v1.Volume, 0, len(claims)+len(pod.Spec.Volumes))
	for i, claim := range claims {
		name := set.Spec.VolumeClaimTemplates[i].Name
		templates[name] = true
		volumes = append(volumes, v1.Volume{
			Name: name,
			VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name},
			},
		})
	}
	for _, vol := range pod.Spec.Volumes {
		if !templates[vol.Name] {
			volumes = append(volumes, vol)
		}
	}
	pod.Spec.Volumes = volumes
}

// updateIdentity sets the pod's name, namespace and the pod-name and
// pod-index labels from its ordinal.
func updateIdentity(set *apps.StatefulSet, pod *v1.Pod) {
	ordinal := ordinalOf(pod)
	pod.Name = podName(set, ordinal)
	pod.Namespace = set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[apps.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[apps.PodIndexLabel] = strconv.Itoa(ordinal)
}

// newPod returns the pod of ordinal from set's template: generateName
// "<set>-" as every controller's pods, the set as controller, the
// identity, hostname and subdomain (immutable, so set only here) and the
// claims' volumes.
func newPod(set *apps.StatefulSet, ordinal int) *v1.Pod {
	pod := podcontrol.PodFromTemplate(&set.Spec.Template, set.Name, metav1.NewControllerRef(set, controllerKind))
	pod.Name = podName(set, ordinal)
	updateIdentity(set, pod)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	updateStorage(set, pod)
	return pod
}

// newVersionedPod returns the pod of ordinal at the revision it should be
// created at: the current revision below the rolling update's partition
// (or, without a rollingUpdate block, below status.currentReplicas), the
// update revision otherwise. The condition groups as upstream's does: the
// partition applies whatever the strategy type.
func newVersionedPod(currentSet, updateSet *apps.StatefulSet, currentRevision, updateRevision string, ordinal int) *v1.Pod {
	strategy := currentSet.Spec.UpdateStrategy
	start := startOrdinal(currentSet)
	if strategy.Type == apps.RollingUpdateStatefulSetStrategyType &&
		(strategy.RollingUpdate == nil && ordinal < start+int(currentSet.Status.CurrentReplicas)) ||
		(strategy.RollingUpdate != nil && ordinal < start+int(*strategy.RollingUpdate.Partition)) {
		pod := newPod(currentSet, ordinal)
		setPodRevision(pod, currentRevision)
		return pod
	}
	pod := newPod(updateSet, ordinal)
	setPodRevision(pod, updateRevision)
	return pod
}

func setPodRevision(pod *v1.Pod, revision string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[apps.StatefulSetRevisionLabel] = revision
}

// podRevision is the revision the pod's controller-revision-hash label
// names, or "".
func podRevision(pod *v1.Pod) string {
	return pod.Labels[apps.StatefulSetRevisionLabel]
}
