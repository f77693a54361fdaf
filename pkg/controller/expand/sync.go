package expand

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

const (
	// annResizer names the driver whose external-resizer expands the claim.
	annResizer = "volume.kubernetes.io/storage-resizer"
	// annPreResizeCapacity is the volume's capacity before an expansion
	// that still waits for the node.
	annPreResizeCapacity = "volume.alpha.kubernetes.io/pre-resize-capacity"
	// reasonExternalExpanding is upstream's Event reason.
	reasonExternalExpanding = "ExternalExpanding"
)

// sync hands one claim's pending expansion to the external resizer.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pvc, err := c.pvcs.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pv, err := c.pvs.Get(pvc.Spec.VolumeName)
	if err != nil {
		return fmt.Errorf("failed to get PV %q: %w", pvc.Spec.VolumeName, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != pvc.Namespace || ref.UID != pvc.UID {
		err := fmt.Errorf("persistent Volume is not bound to PVC being updated : %s", key)
		logger.V(4).Info("", "err", err)
		return err
	}
	request := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pvc.Status.Capacity[v1.ResourceStorage]
	if request.Cmp(capacity) <= 0 && !metav1.HasAnnotation(pv.ObjectMeta, annPreResizeCapacity) {
		return nil
	}

	if p, ok := migrated(pv); ok {
		c.recorder.Event(pvc, v1.EventTypeNormal, reasonExternalExpanding,
			fmt.Sprintf("CSI migration enabled for %s; waiting for external resizer to expand the pvc", p.inTree))
		if err := c.setResizer(ctx, pvc, p.driver); err != nil {
			msg := fmt.Sprintf("error setting resizer annotation to pvc %s, with error %v", key, err)
			c.recorder.Event(pvc, v1.EventTypeWarning, reasonExternalExpanding, msg)
			return fmt.Errorf("%s", msg)
		}
		return nil
	}
	c.recorder.Event(pvc, v1.EventTypeNormal, reasonExternalExpanding, "waiting for an external controller to expand this PVC")
	logger.Info("Waiting for an external controller to expand the PVC", "pvcKey", key, "pvcUID", pvc.UID)
	return nil
}

// setResizer sets the resizer annotation through the status subresource,
// guarded by the claim's resourceVersion, unless it is set already.
func (c *Controller) setResizer(ctx context.Context, pvc *v1.PersistentVolumeClaim, driver string) error {
	if pvc.Annotations[annResizer] == driver {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"annotations":     map[string]string{annResizer: driver},
			"resourceVersion": pvc.ResourceVersion,
		},
	})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Patch(ctx, pvc.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patchPVCStatus failed to patch PVC %q: %w", pvc.Name, err)
	}
	return nil
}
