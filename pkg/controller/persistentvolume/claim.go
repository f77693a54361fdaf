package persistentvolume

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Event reasons, upstream's.
const (
	reasonFailedBinding             = "FailedBinding"
	reasonVolumeMismatch            = "VolumeMismatch"
	reasonVolumeFailedRecycle       = "VolumeFailedRecycle"
	reasonVolumeRecycled            = "VolumeRecycled"
	reasonRecyclerPod               = "RecyclerPod"
	reasonVolumeDelete              = "VolumeDelete"
	reasonVolumeFailedDelete        = "VolumeFailedDelete"
	reasonExternalProvisioning      = "ExternalProvisioning"
	reasonProvisioningFailed        = "ProvisioningFailed"
	reasonProvisioningCleanupFailed = "ProvisioningCleanupFailed"
	reasonProvisioningSucceeded     = "ProvisioningSucceeded"
	reasonWaitForFirstConsumer      = "WaitForFirstConsumer"
	reasonWaitForPodScheduled       = "WaitForPodScheduled"
	reasonClaimLost                 = "ClaimLost"
	reasonClaimMisbound             = "ClaimMisbound"
	reasonUnknownReclaimPolicy      = "VolumeUnknownReclaimPolicy"
)

// syncClaim is the claim half of the state machine. A claim without the
// bind-completed annotation is being bound; with it, its binding is
// checked (and repaired, or the claim declared Lost).
func (c *Controller) syncClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Synchronizing PersistentVolumeClaim", "PVC", klog.KObj(claim), "phase", claim.Status.Phase, "volumeName", claim.Spec.VolumeName)
	claim, err := c.updateClaimMigrationAnnotations(ctx, claim)
	if err != nil {
		return err
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

func (c *Controller) syncUnboundClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return c.syncClaimWithoutVolumeName(ctx, claim)
	}
	return c.syncClaimWithVolumeName(ctx, claim)
}

// syncClaimWithoutVolumeName looks for a volume for a claim that names
// none; without one it assigns the default StorageClass, waits for the
// first consumer, or provisions.
func (c *Controller) syncClaimWithoutVolumeName(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	delayBinding, err := storagehelpers.IsDelayBindingMode(claim, c.classLister)
	if err != nil {
		return err
	}
	pv, err := c.volumes.findBestMatch(claim, delayBinding, c.vac)
	if err != nil {
		logger.V(2).Info("Synchronizing unbound PersistentVolumeClaim, Error finding PV for claim", "PVC", klog.KObj(claim), "err", err)
		return fmt.Errorf("error finding PV for claim %q: %w", claimKey(claim), err)
	}
	if pv != nil {
		logger.V(4).Info("Synchronizing unbound PersistentVolumeClaim, volume found", "PVC", klog.KObj(claim), "volumeName", pv.Name)
		// A provisioning of this claim (if one was started) ends with
		// the binding: a failure counts an error, a success its duration.
		if err := c.bind(ctx, pv, claim); err != nil {
			c.opTimes.failed(claimKey(claim))
			return err
		}
		c.opTimes.done(claimKey(claim))
		return nil
	}

	updated, err := c.assignDefaultStorageClass(ctx, claim)
	if err != nil {
		recordRetroactiveStorageClass(err)
		return fmt.Errorf("can't update PersistentVolumeClaim[%q]: %w", claimKey(claim), err)
	}
	if updated {
		recordRetroactiveStorageClass(nil)
		// The update queues the claim again.
		return nil
	}
	switch {
	case delayBinding && !storagehelpers.IsDelayBindingProvisioning(claim):
		if err := c.eventForDelayBindingClaim(claim); err != nil {
			return err
		}
	case storagehelpers.GetPersistentVolumeClaimClass(claim) != "":
		// provisionClaim writes the claim itself (the provisioner
		// annotation) and leaves its phase alone.
		return c.provisionClaim(ctx, claim)
	default:
		c.recorder.Event(claim, v1.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	_, err = c.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
	return err
}

// syncClaimWithVolumeName binds a claim to the volume it names, if that
// volume is free (and satisfies it) or already bound to it.
func (c *Controller) syncClaimWithVolumeName(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	pv, found, err := c.volumes.get(claim.Spec.VolumeName)
	if err != nil {
		return err
	}
	switch {
	case !found:
		logger.V(4).Info("Synchronizing unbound PersistentVolumeClaim, volume requested and not found, will try again next time", "PVC", klog.KObj(claim), "volumeName", claim.Spec.VolumeName)
		_, err = c.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
		return err
	case pv.Spec.ClaimRef == nil:
		if err := checkVolumeSatisfyClaim(pv, claim, c.vac); err != nil {
			logger.V(4).Info("Can't bind the claim to volume", "volumeName", pv.Name, "err", err)
			msg := fmt.Sprintf("Cannot bind to requested volume %q: %s", pv.Name, err)
			c.recorder.Event(claim, v1.EventTypeWarning, reasonVolumeMismatch, msg)
			_, err = c.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, pv, claim)
	case storagehelpers.IsVolumeBoundToClaim(pv, claim):
		return c.bind(ctx, pv, claim)
	default:
		msg := fmt.Sprintf("volume %q already bound to a different claim.", pv.Name)
		c.recorder.Event(claim, v1.EventTypeWarning, reasonFailedBinding, msg)
		if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) {
			// Pre-bound by the user: wait for the volume to be freed.
			_, err = c.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
			return err
		}
		return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q", claimKey(claim), claim.Spec.VolumeName, claimRefKey(pv.Spec.ClaimRef))
	}
}

// syncBoundClaim checks a claim that was bound once.
func (c *Controller) syncBoundClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		_, err := c.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, reasonClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		return err
	}
	pv, found, err := c.volumes.get(claim.Spec.VolumeName)
	if err != nil {
		return err
	}
	switch {
	case !found:
		_, err = c.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, reasonClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		return err
	case pv.Spec.ClaimRef == nil, pv.Spec.ClaimRef.UID == claim.UID:
		// Finish (or repair) the binding; bind writes only what differs.
		return c.bind(ctx, pv, claim)
	default:
		_, err = c.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, reasonClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
		return err
	}
}

// checkVolumeSatisfyClaim is upstream's check of a volume a claim names
// explicitly; its messages end up in VolumeMismatch Events.
func checkVolumeSatisfyClaim(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim, vac bool) error {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if pv.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", pv.Name)
	}
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	if capacity.Value() < requested.Value() {
		return fmt.Errorf("requested PV is too small")
	}
	if storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		return fmt.Errorf("storageClassName does not match")
	}
	claimVAC := ptr.Deref(claim.Spec.VolumeAttributesClassName, "")
	volumeVAC := ptr.Deref(pv.Spec.VolumeAttributesClassName, "")
	if vac && claimVAC != volumeVAC {
		return fmt.Errorf("volumeAttributesClassName does not match")
	}
	if !vac && (claimVAC != "" || volumeVAC != "") {
		return fmt.Errorf("volumeAttributesClassName is not supported when the feature-gate VolumeAttributesClass is disabled")
	}
	if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
		return fmt.Errorf("incompatible volumeMode")
	}
	if !storagehelpers.CheckAccessModes(claim, pv) {
		return fmt.Errorf("incompatible accessMode")
	}
	return nil
}

// eventForDelayBindingClaim tells why a WaitForFirstConsumer claim waits:
// for a pod, or for its pods to be scheduled.
func (c *Controller) eventForDelayBindingClaim(claim *v1.PersistentVolumeClaim) error {
	pods, err := c.podsUsingClaim(claimKey(claim))
	if err != nil {
		return err
	}
	var unscheduled []string
	for _, pod := range pods {
		if !podTerminated(pod) && pod.Spec.NodeName == "" {
			unscheduled = append(unscheduled, pod.Name)
		}
	}
	switch len(unscheduled) {
	case 0:
		c.recorder.Event(claim, v1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case 1:
		c.recorder.Event(claim, v1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", unscheduled[0]))
	default:
		c.recorder.Event(claim, v1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(unscheduled, ",")))
	}
	return nil
}

// volumeUsers returns the sorted namespace/name of the pods that use the
// volume's claim and are not terminated.
func (c *Controller) volumeUsers(pv *v1.PersistentVolume) ([]string, error) {
	if pv.Spec.ClaimRef == nil {
		return nil, nil
	}
	key := claimRefKey(pv.Spec.ClaimRef)
	pods, err := c.podsUsingClaim(key)
	if err != nil {
		return nil, fmt.Errorf("error finding pods by pvc %q: %w", key, err)
	}
	names := sets.New[string]()
	for _, pod := range pods {
		if !podTerminated(pod) {
			names.Insert(pod.Namespace + "/" + pod.Name)
		}
	}
	return sets.List(names), nil
}

// podTerminated is upstream's volume-util test: the pod finished, or it is
// being deleted and none of its containers runs.
func podTerminated(pod *v1.Pod) bool {
	s := pod.Status
	if s.Phase == v1.PodFailed || s.Phase == v1.PodSucceeded {
		return true
	}
	return pod.DeletionTimestamp != nil && notRunning(s.InitContainerStatuses) && notRunning(s.ContainerStatuses) && notRunning(s.EphemeralContainerStatuses)
}

func notRunning(statuses []v1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Terminated == nil && s.State.Waiting == nil {
			return false
		}
	}
	return true
}
