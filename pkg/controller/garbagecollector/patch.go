package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// deleteOwnerRefStrategicMergePatch removes the references to ownerUIDs,
// with dependentUID as a precondition (upstream's
// GenerateDeleteOwnerRefStrategicMergeBytes).
func deleteOwnerRefStrategicMergePatch(dependentUID types.UID, ownerUIDs []types.UID) ([]byte, error) {
	refs := make([]map[string]string, 0, len(ownerUIDs))
	for _, uid := range ownerUIDs {
		refs = append(refs, map[string]string{"$patch": "delete", "uid": string(uid)})
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": dependentUID, "ownerReferences": refs},
	})
}

// metaPatch is the JSON merge patch that replaces ownerReferences or
// finalizers at a resourceVersion.
type metaPatch struct {
	Metadata struct {
		ResourceVersion string                  `json:"resourceVersion"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences,omitempty"`
		Finalizers      *[]string               `json:"finalizers,omitempty"`
	} `json:"metadata"`
}

func ownerRefsMergePatch(rv string, refs []metav1.OwnerReference) ([]byte, error) {
	var p metaPatch
	p.Metadata.ResourceVersion = rv
	p.Metadata.OwnerReferences = refs
	b, err := json.Marshal(p)
	if err != nil || len(refs) > 0 {
		return b, err
	}
	// An empty list must be sent as null-free [] to clear the field.
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": rv, "ownerReferences": []metav1.OwnerReference{}}})
}

// unblockPatch is the strategic merge patch of unblockOwnerRefs. With no
// reference to change, ownerReferences must be left out of it: a null
// list in a strategic merge patch deletes every reference.
type unblockPatch struct {
	Metadata struct {
		UID             types.UID               `json:"uid"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences,omitempty"`
	} `json:"metadata"`
}

// unblockOwnerReferencesStrategicMergePatch sets blockOwnerDeletion=false
// on every blocking reference of a dependent (merged by uid) and leaves the
// others alone.
func unblockOwnerReferencesStrategicMergePatch(uid types.UID, owners []metav1.OwnerReference) ([]byte, error) {
	var p unblockPatch
	p.Metadata.UID = uid
	for _, o := range owners {
		if isBlocking(o) {
			o.BlockOwnerDeletion = ptr.To(false)
			p.Metadata.OwnerReferences = append(p.Metadata.OwnerReferences, o)
		}
	}
	return json.Marshal(p)
}

// patch applies a strategic merge patch, falling back for resources that do
// not support it (custom resources) to the JSON merge patch jmp builds from
// the live object.
func (c *Controller) patch(ctx context.Context, id objectReference, smp []byte, jmp func(*metav1.PartialObjectMetadata) ([]byte, error)) error {
	_, err := c.patchObject(ctx, id, smp, types.StrategicMergePatchType)
	if !apierrors.IsUnsupportedMediaType(err) {
		return err
	}
	live, err := c.getObject(ctx, id)
	if err != nil {
		return err
	}
	p, err := jmp(live)
	if err != nil {
		return err
	}
	_, err = c.patchObject(ctx, id, p, types.MergePatchType)
	return err
}

// removeOwnerRefs removes the references to ownerUIDs from the dependent id.
func (c *Controller) removeOwnerRefs(ctx context.Context, id objectReference, ownerUIDs []types.UID) error {
	smp, err := deleteOwnerRefStrategicMergePatch(id.UID, ownerUIDs)
	if err != nil {
		return err
	}
	return c.patch(ctx, id, smp, func(live *metav1.PartialObjectMetadata) ([]byte, error) {
		var kept []metav1.OwnerReference
		for _, r := range live.OwnerReferences {
			if !slices.Contains(ownerUIDs, r.UID) {
				kept = append(kept, r)
			}
		}
		return ownerRefsMergePatch(live.ResourceVersion, kept)
	})
}

// unblockOwnerRefs makes every reference of the dependent non-blocking.
// When none blocks it writes nothing: that is the retry after an unblock
// whose following deletion conflicted (the unblock itself changed the
// resourceVersion), and upstream's patch then changes nothing either.
func (c *Controller) unblockOwnerRefs(ctx context.Context, id objectReference, owners []metav1.OwnerReference) error {
	if !slices.ContainsFunc(owners, isBlocking) {
		return nil
	}
	smp, err := unblockOwnerReferencesStrategicMergePatch(id.UID, owners)
	if err != nil {
		return err
	}
	return c.patch(ctx, id, smp, func(live *metav1.PartialObjectMetadata) ([]byte, error) {
		refs := make([]metav1.OwnerReference, 0, len(owners))
		for _, o := range owners {
			o.BlockOwnerDeletion = ptr.To(false)
			refs = append(refs, o)
		}
		return ownerRefsMergePatch(live.ResourceVersion, refs)
	})
}

// removeFinalizer removes finalizer from the object id with a JSON merge
// patch at the live resourceVersion, retrying conflicts.
func (c *Controller) removeFinalizer(ctx context.Context, id objectReference, finalizer string) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		live, err := c.getObject(ctx, id)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot finalize owner %s, because cannot get it: %w. The garbage collector will retry later", id, err)
		}
		if !slices.Contains(live.Finalizers, finalizer) {
			return nil
		}
		kept := slices.DeleteFunc(slices.Clone(live.Finalizers), func(f string) bool { return f == finalizer })
		if kept == nil {
			kept = []string{}
		}
		var p metaPatch
		p.Metadata.ResourceVersion = live.ResourceVersion
		p.Metadata.Finalizers = &kept
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = c.patchObject(ctx, id, b, types.MergePatchType)
		return err
	})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("updateMaxRetries(%d) has reached. The garbage collector will retry later for owner %v", retry.DefaultBackoff.Steps, id)
	}
	return err
}
