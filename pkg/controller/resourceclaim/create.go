package resourceclaim

import (
	"context"
	"fmt"
	"maps"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	resourceclaimmetrics "k8s.io/dynamic-resource-allocation/resourceclaim/metrics"
	"k8s.io/klog/v2"
)

// maxBaseLen leaves room for the API server's five random characters in a
// 63-character name.
const maxBaseLen = 57

// generateName is upstream's name prefix for the claim of ownerName's
// claim claimName: "<owner>-<claim>-", or, when that is longer than 57
// characters, both parts cut in proportion to their lengths and joined by
// one hyphen (no trailing one), so that neither loses all its characters.
func generateName(ownerName, claimName string) string {
	name := ownerName + "-" + claimName + "-"
	if len(name) <= maxBaseLen {
		return name
	}
	return ownerName[:len(ownerName)*maxBaseLen/len(name)] + "-" + claimName[:len(claimName)*maxBaseLen/len(name)]
}

// createFromTemplate creates the claim of an owner's claim claimName from
// the named template: the template's labels, its annotations plus
// resource.kubernetes.io/pod-claim-name, its spec, and owner as the
// controller.
func (c *Controller) createFromTemplate(ctx context.Context, namespace, templateName, claimName string, owner metav1.OwnerReference) (*resourceapi.ResourceClaim, error) {
	tmpl, err := c.templates.ResourceClaimTemplates(namespace).Get(templateName)
	if err != nil {
		return nil, fmt.Errorf("resource claim template %q: %w", templateName, err)
	}
	annotations := maps.Clone(tmpl.Spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourceapi.PodResourceClaimAnnotation] = claimName
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName(owner.Name, claimName),
			OwnerReferences: []metav1.OwnerReference{owner},
			Annotations:     annotations,
			Labels:          tmpl.Spec.Labels,
		},
		Spec: tmpl.Spec.Spec,
	}
	labels := createLabels(claim)
	created, err := c.client.ResourceV1().ResourceClaims(namespace).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		resourceclaimmetrics.ResourceClaimCreate.WithLabelValues(labels("failure")...).Inc()
		return nil, fmt.Errorf("create ResourceClaim %s: %w", claim.Name, err)
	}
	resourceclaimmetrics.ResourceClaimCreate.WithLabelValues(labels("success")...).Inc()
	klog.FromContext(ctx).V(4).Info("Created ResourceClaim", "claim", klog.KObj(created), "owner", klog.KRef(namespace, owner.Name), "ownerKind", owner.Kind)
	c.created.Mutation(created)
	return created, nil
}

// findCreated returns a claim controlled by the owner (index key
// "<namespace>/<uid>" of index) whose pod-claim-name annotation is
// claimName: one an earlier sync created. Should there be several, the
// first is used and the others go with their owner.
func (c *Controller) findCreated(index, ownerKey, claimName string) (*resourceapi.ResourceClaim, error) {
	objs, err := c.created.ByIndex(index, ownerKey)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		claim, ok := obj.(*resourceapi.ResourceClaim)
		if !ok {
			return nil, fmt.Errorf("unexpected object of type %T returned by claim cache", obj)
		}
		if name, ok := claim.Annotations[resourceapi.PodResourceClaimAnnotation]; ok && name == claimName {
			return claim, nil
		}
	}
	return nil, nil
}

// claimExists reports whether the named claim exists and passes owned. A
// claim neither cached nor just created is looked up on the API server
// before the caller creates a replacement.
func (c *Controller) claimExists(ctx context.Context, namespace, name string, owned func(*resourceapi.ResourceClaim) bool) (bool, error) {
	obj, exists, err := c.created.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	claim, _ := obj.(*resourceapi.ResourceClaim)
	if !exists || claim == nil {
		claim, err = c.client.ResourceV1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return owned(claim), nil
}
