package resourceclaim

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// Index names, as upstream names them on the shared informers (another
// controller asking for the same index reuses it).
const (
	podClaimIndex        = "podResourceClaim"              // pod -> "<ns>/<claim>" it uses
	podTemplateIndex     = "podResourceClaimTemplate"      // pod -> "<ns>/<template>"
	groupClaimIndex      = "podGroupResourceClaim"         // PodGroup -> "<ns>/<claim>"
	groupTemplateIndex   = "podGroupResourceClaimTemplate" // PodGroup -> "<ns>/<template>"
	groupMembersIndex    = "podGroupMembers"               // pod -> "<ns>/<PodGroup>"
	claimPodOwnerIndex   = "claimPodOwner"                 // claim -> "<ns>/<pod uid>"
	claimGroupOwnerIndex = "claimPodGroupOwner"            // claim -> "<ns>/<PodGroup uid>"
)

const schedulingGroupPrefix = schedulingapi.GroupName + "/"

func podClaimIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for i := range pod.Spec.ResourceClaims {
		// A template's claim is not named before it is created: unknown
		// names are skipped, the pod is found through the template index.
		if name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i]); err == nil && name != nil {
			keys.Insert(pod.Namespace + "/" + *name)
		}
	}
	return sets.List(keys), nil
}

func podTemplateIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil {
			keys.Insert(pod.Namespace + "/" + *pc.ResourceClaimTemplateName)
		}
	}
	return sets.List(keys), nil
}

func groupClaimIndexFunc(obj any) ([]string, error) {
	group, ok := obj.(*schedulingapi.PodGroup)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for i := range group.Spec.ResourceClaims {
		if name, _, err := resourceclaim.NameFromPodGroup(group, &group.Spec.ResourceClaims[i]); err == nil && name != nil {
			keys.Insert(group.Namespace + "/" + *name)
		}
	}
	return sets.List(keys), nil
}

func groupTemplateIndexFunc(obj any) ([]string, error) {
	group, ok := obj.(*schedulingapi.PodGroup)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for _, gc := range group.Spec.ResourceClaims {
		if gc.ResourceClaimTemplateName != nil {
			keys.Insert(group.Namespace + "/" + *gc.ResourceClaimTemplateName)
		}
	}
	return sets.List(keys), nil
}

func groupMembersIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
		return nil, nil
	}
	return []string{pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName}, nil
}

func claimPodOwnerIndexFunc(obj any) ([]string, error) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, o := range claim.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.APIVersion == "v1" && o.Kind == "Pod" {
			keys = append(keys, claim.Namespace+"/"+string(o.UID))
		}
	}
	return keys, nil
}

func claimGroupOwnerIndexFunc(obj any) ([]string, error) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return nil, nil
	}
	o := metav1.GetControllerOfNoCopy(claim)
	if o == nil || o.Kind != "PodGroup" || !strings.HasPrefix(o.APIVersion, schedulingGroupPrefix) {
		return nil, nil
	}
	return []string{claim.Namespace + "/" + string(o.UID)}, nil
}
