package ephemeral

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
)

// reasonFailedBinding is upstream's Event reason for a volume the
// controller could not provide.
const reasonFailedBinding = "FailedBinding"

// sync creates the missing claims of one pod's generic ephemeral volumes,
// in volume order, stopping at the first failure.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pod, err := c.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(5).Info("Ephemeral: nothing to do for pod, it is gone", "podKey", key)
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		logger.V(5).Info("Ephemeral: nothing to do for pod, it is marked for deletion", "podKey", key)
		return nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := c.handleVolume(ctx, pod, vol); err != nil {
			c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("ephemeral volume %s: %v", vol.Name, err))
			return fmt.Errorf("pod %s, ephemeral volume %s: %w", key, vol.Name, err)
		}
	}
	return nil
}

// handleVolume creates vol's claim unless it exists; an existing claim the
// pod does not control is an error.
func (c *Controller) handleVolume(ctx context.Context, pod *v1.Pod, vol *v1.Volume) error {
	if vol.Ephemeral == nil {
		return nil
	}
	claimName := ephemeral.VolumeClaimName(pod, vol)
	existing, err := c.pvcs.PersistentVolumeClaims(pod.Namespace).Get(claimName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if existing != nil {
		return ephemeral.VolumeIsForPod(pod, existing)
	}
	createAttempts.Inc()
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Create(ctx, claimFor(pod, vol, claimName), metav1.CreateOptions{}); err != nil {
		createFailures.Inc()
		return fmt.Errorf("create PVC %s: %w", claimName, err)
	}
	klog.FromContext(ctx).V(2).Info("Created ephemeral volume claim", "pod", klog.KObj(pod), "PVC", klog.KRef(pod.Namespace, claimName))
	return nil
}

// claimFor builds vol's claim from its template, controlled by pod.
func claimFor(pod *v1.Pod, vol *v1.Volume, claimName string) *v1.PersistentVolumeClaim {
	tmpl := vol.Ephemeral.VolumeClaimTemplate
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: claimName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "v1",
				Kind:               "Pod",
				Name:               pod.Name,
				UID:                pod.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
	}
	if tmpl != nil {
		pvc.Labels = tmpl.Labels
		pvc.Annotations = tmpl.Annotations
		pvc.Spec = *tmpl.Spec.DeepCopy()
	}
	return pvc
}
