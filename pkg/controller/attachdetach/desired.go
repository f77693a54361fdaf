package attachdetach

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// wanted is a volume some pods on a node need attached.
type wanted struct {
	name     v1.UniqueVolumeName
	specName string // the PersistentVolume's name: what Events call the volume
	pvName   string
	driver   string
	handle   string
	// multiAttach is upstream's IsMultiAttachAllowed: the volume may be
	// attached to several nodes at once.
	multiAttach bool
	pods        []*v1.Pod
}

// managedAnnotation marks the nodes whose volumes this controller attaches
// (the kubelet sets it when --enable-controller-attach-detach, its default).
const managedAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach"

// desiredOn returns the attachable volumes the scheduled, not terminated pods
// on node need, by unique name. Volumes that cannot be resolved yet (an
// unbound claim, a missing volume) are skipped, as upstream skips them: the
// claim's or pod's next event brings the node back.
func (c *Controller) desiredOn(logger klog.Logger, node string) (map[v1.UniqueVolumeName]*wanted, error) {
	pods, err := nodeutil.PodsOnNode(c.podIndexer, node)
	if err != nil {
		return nil, err
	}
	// Deterministic pod order: Events and logs do not depend on the cache.
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	out := map[v1.UniqueVolumeName]*wanted{}
	for _, pod := range pods {
		if isPodTerminated(pod) {
			continue
		}
		for i := range pod.Spec.Volumes {
			w, err := c.attachableVolume(pod, &pod.Spec.Volumes[i])
			if err != nil {
				logger.V(5).Info("Skipping volume of pod", "pod", klog.KObj(pod), "volume", pod.Spec.Volumes[i].Name, "err", err)
				continue
			}
			if w == nil {
				continue
			}
			if have, ok := out[w.name]; ok {
				have.pods = append(have.pods, pod)
				continue
			}
			w.pods = []*v1.Pod{pod}
			out[w.name] = w
		}
	}
	return out, nil
}

// attachableVolume resolves a pod volume to the CSI volume to attach, nil if
// it needs no attaching (not a claim, not CSI, or a CSIDriver with
// attachRequired false), or an error if it cannot be resolved yet.
func (c *Controller) attachableVolume(pod *v1.Pod, vol *v1.Volume) (*wanted, error) {
	pv, err := c.claimedVolume(pod, vol)
	if err != nil || pv == nil {
		// Inline volumes: an inline CSI volume is ephemeral and never
		// attached; kcm has no in-tree attachable plugins.
		return nil, err
	}
	src := pv.Spec.CSI
	if src == nil {
		return nil, nil
	}
	required, err := c.attachRequired(src.Driver)
	if err != nil || !required {
		return nil, err
	}
	return &wanted{
		name:        uniqueVolumeName(src.Driver, src.VolumeHandle),
		specName:    pv.Name,
		pvName:      pv.Name,
		driver:      src.Driver,
		handle:      src.VolumeHandle,
		multiAttach: multiAttachAllowed(pv),
	}, nil
}

// claimedVolume is the PersistentVolume bound to the claim a pod volume
// names (a persistentVolumeClaim or a generic ephemeral volume), nil for an
// inline volume, or an error if the claim is not bound to it (yet): upstream's
// CreateVolumeSpec.
func (c *Controller) claimedVolume(pod *v1.Pod, vol *v1.Volume) (*v1.PersistentVolume, error) {
	var claimName string
	switch {
	case vol.PersistentVolumeClaim != nil:
		claimName = vol.PersistentVolumeClaim.ClaimName
	case vol.Ephemeral != nil:
		claimName = ephemeral.VolumeClaimName(pod, vol)
	default:
		return nil, nil
	}
	pvc, err := c.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(claimName)
	if err != nil {
		return nil, fmt.Errorf("failed to find PVC %s/%s in PVCInformer cache: %w", pod.Namespace, claimName, err)
	}
	if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName == "" {
		return nil, fmt.Errorf("PVC %s/%s has non-bound phase (%q) or empty pvc.Spec.VolumeName (%q)",
			pod.Namespace, claimName, pvc.Status.Phase, pvc.Spec.VolumeName)
	}
	if vol.Ephemeral != nil {
		if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
			return nil, err
		}
	}
	pv, err := c.pvLister.Get(pvc.Spec.VolumeName)
	if err != nil {
		return nil, fmt.Errorf("failed to find PV %q in PVInformer cache: %w", pvc.Spec.VolumeName, err)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		return nil, fmt.Errorf("PV %q is not bound to claim %s/%s", pv.Name, pod.Namespace, claimName)
	}
	return pv, nil
}

// attachRequired is upstream's rule: attach unless a CSIDriver object for
// the driver says attachRequired: false; no CSIDriver means attach.
func (c *Controller) attachRequired(driver string) (bool, error) {
	d, err := c.csiDriverLister.Get(driver)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return d.Spec.AttachRequired == nil || *d.Spec.AttachRequired, nil
}

// multiAttachAllowed is upstream's IsMultiAttachAllowed for a
// PersistentVolume: no access modes or a ReadWriteMany/ReadOnlyMany mode.
func multiAttachAllowed(pv *v1.PersistentVolume) bool {
	if len(pv.Spec.AccessModes) == 0 {
		return true
	}
	for _, m := range pv.Spec.AccessModes {
		if m == v1.ReadWriteMany || m == v1.ReadOnlyMany {
			return true
		}
	}
	return false
}

// isPodTerminated is upstream's volume IsPodTerminated: Succeeded, Failed, or
// deleting with no container running.
func isPodTerminated(pod *v1.Pod) bool {
	s := pod.Status
	if s.Phase == v1.PodFailed || s.Phase == v1.PodSucceeded {
		return true
	}
	return pod.DeletionTimestamp != nil && notRunning(s.InitContainerStatuses) &&
		notRunning(s.ContainerStatuses) && notRunning(s.EphemeralContainerStatuses)
}

func notRunning(statuses []v1.ContainerStatus) bool {
	for _, st := range statuses {
		if st.State.Terminated == nil && st.State.Waiting == nil {
			return false
		}
	}
	return true
}
