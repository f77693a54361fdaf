package controllerref

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// adoptPatch is a strategic merge patch adding controller as the
// controllerRef of the object with uid (ownerReferences merge by uid), and
// finalizers.
func adoptPatch(controller metav1.Object, kind schema.GroupVersionKind, uid types.UID, finalizers []string) ([]byte, error) {
	type meta struct {
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
		UID             types.UID               `json:"uid"`
		Finalizers      []string                `json:"finalizers,omitempty"`
	}
	return json.Marshal(struct {
		Metadata meta `json:"metadata"`
	}{meta{
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         kind.GroupVersion().String(),
			Kind:               kind.Kind,
			Name:               controller.GetName(),
			UID:                controller.GetUID(),
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}},
		UID:        uid,
		Finalizers: finalizers,
	}})
}

// releasePatch is a strategic merge patch deleting the ownerReference to
// ownerUID from the object with uid, and removing finalizers.
func releasePatch(uid, ownerUID types.UID, finalizers []string) ([]byte, error) {
	type meta struct {
		UID              types.UID           `json:"uid"`
		OwnerReferences  []map[string]string `json:"ownerReferences"`
		DeleteFinalizers []string            `json:"$deleteFromPrimitiveList/finalizers,omitempty"`
	}
	return json.Marshal(struct {
		Metadata meta `json:"metadata"`
	}{meta{
		UID:              uid,
		OwnerReferences:  []map[string]string{{"$patch": "delete", "uid": string(ownerUID)}},
		DeleteFinalizers: finalizers,
	}})
}
