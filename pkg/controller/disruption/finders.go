package disruption

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/scale"
	"k8s.io/utils/ptr"
)

// owner is a controller of selected pods and its desired scale.
type owner struct {
	uid   types.UID
	scale int32
}

// finder resolves a pod's controllerRef to the controller whose scale the
// budget counts. It returns nil, nil when the reference is not its kind or
// the object is not found (or is another object of the same name).
type finder func(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*owner, error)

// finders are tried in upstream's order: the built-in workloads from the
// informers, then the scale subresource of whatever the reference names
// (which also serves a workload the informers do not have yet).
func (c *Controller) finders() []finder {
	return []finder{c.replicationController, c.deployment, c.replicaSet, c.statefulSet, c.scaleSubresource}
}

// isKind reports whether ref is of kind in one of groups; an unparsable
// apiVersion is an error, whatever the kind.
func isKind(ref *metav1.OwnerReference, kind string, groups ...string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	return ref.Kind == kind && slices.Contains(groups, gv.Group), nil
}

func (c *Controller) replicationController(_ context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	if ok, err := isKind(ref, "ReplicationController", ""); !ok || err != nil {
		return nil, err
	}
	rc, err := c.rcs.ReplicationControllers(ns).Get(ref.Name)
	if err != nil || rc.UID != ref.UID {
		return nil, nil // the lister's only error is NotFound
	}
	return &owner{rc.UID, ptr.Deref(rc.Spec.Replicas, 1)}, nil
}

// deployment finds the Deployment of a pod's ReplicaSet.
func (c *Controller) deployment(_ context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	rsRef := metav1.GetControllerOfNoCopy(rs)
	if rsRef == nil {
		return nil, nil
	}
	if ok, err := isKind(rsRef, "Deployment", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	d, err := c.deployments.Deployments(ns).Get(rsRef.Name)
	if err != nil || d.UID != rsRef.UID {
		return nil, nil
	}
	return &owner{d.UID, ptr.Deref(d.Spec.Replicas, 1)}, nil
}

// replicaSet finds a ReplicaSet that no Deployment controls (a
// Deployment's is counted through the Deployment, or not at all).
func (c *Controller) replicaSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	if rsRef := metav1.GetControllerOfNoCopy(rs); rsRef != nil && rsRef.Kind == "Deployment" {
		return nil, nil
	}
	return &owner{rs.UID, ptr.Deref(rs.Spec.Replicas, 1)}, nil
}

func (c *Controller) statefulSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	if ok, err := isKind(ref, "StatefulSet", "apps"); !ok || err != nil {
		return nil, err
	}
	set, err := c.sets.StatefulSets(ns).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return nil, nil
	}
	return &owner{set.UID, ptr.Deref(set.Spec.Replicas, 1)}, nil
}

// scaleSubresource reads the scale subresource of any kind the REST mapper
// knows. A 404 is told apart: the object is gone (nil, nil), or its
// resource serves no scale subresource (an error naming the resource).
func (c *Controller) scaleSubresource(ctx context.Context, ref *metav1.OwnerReference, ns string) (*owner, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := c.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return nil, err
	}
	gr := mapping.Resource.GroupResource()
	s, err := c.scales.Scales(ns).Get(ctx, gr, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		implements, err := c.implementsScale(mapping.Resource)
		if err != nil {
			return nil, err
		}
		if !implements {
			return nil, fmt.Errorf("%s does not implement the scale subresource", gr.String())
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.UID != ref.UID {
		return nil, nil
	}
	return &owner{s.UID, s.Spec.Replicas}, nil
}

// implementsScale asks discovery whether gvr serves a scale subresource of
// a Scale kind the scale client knows.
func (c *Controller) implementsScale(gvr schema.GroupVersionResource) (bool, error) {
	list, err := c.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false, err
	}
	versions := scale.NewScaleConverter().ScaleVersions()
	for _, r := range list.APIResources {
		if r.Name != gvr.Resource+"/scale" || r.Kind != "Scale" {
			continue
		}
		for _, v := range versions {
			if r.Group == v.Group && r.Version == v.Version {
				return true, nil
			}
		}
	}
	return false, nil
}
