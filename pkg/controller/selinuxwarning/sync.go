package selinuxwarning

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
)

// Upstream's Event for a volume a pod mounts with two labels.
const reasonMultipleLabels = "MultipleSELinuxLabels"

// errMultipleLabels marks a pod that mounts one volume with different
// labels in different containers: the pod has to change (be recreated)
// before a retry can help.
var errMultipleLabels = errors.New("multiple SELinux labels")

// sync records the volumes of the pod key in the cache and reports the
// conflicts that causes; a pod that is gone or has finished is forgotten.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ref, err := cache.ParseObjectName(key)
	if err != nil {
		return controller.Permanent(err)
	}
	pod, err := c.pods.Pods(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) || (err == nil && (pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed)) {
		// A finished pod's volumes are unmounted by the kubelet.
		logger.V(4).Info("Deleting pod", "key", ref)
		c.cache.deletePod(ref)
		return nil
	}
	if err != nil {
		return err
	}
	return c.syncPod(logger, pod)
}

// syncPod adds every tracked volume the pod's containers mount, with the
// label and policy the kubelet would mount it with. Volumes whose claim or
// volume cannot be resolved yet are retried with backoff, as upstream.
func (c *Controller) syncPod(logger klog.Logger, pod *v1.Pod) error {
	logger.V(4).Info("Syncing pod", "pod", klog.KObj(pod))
	var errs []error
	resolved := make(map[string]mountable, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if _, isClaim := storageutil.ClaimName(pod, vol); !isClaim {
			resolved[vol.Name] = inlineMountable(pod, vol)
			continue
		}
		pv, err := storageutil.BoundVolume(pod, vol, c.pvcs, c.pvs)
		if err != nil {
			// Frequent while a claim is being bound.
			errs = append(errs, err)
			continue
		}
		resolved[vol.Name] = persistentMountable(pv)
	}

	podPolicy := v1.SELinuxChangePolicyMountOption
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SELinuxChangePolicy != nil {
		podPolicy = *sc.SELinuxChangePolicy
	}
	for _, mount := range mountedVolumes(pod) {
		m, ok := resolved[mount.name]
		if !ok {
			continue
		}
		contextMount, err := c.contextMount(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(mount.labels) > 1 {
			c.recorder.Eventf(pod, v1.EventTypeWarning, reasonMultipleLabels,
				"Volume %q is mounted twice with different SELinux labels inside this pod", mount.name)
			errs = append(errs, fmt.Errorf("volume %q: %w: %s", mount.name, errMultipleLabels, strings.Join(mount.labels, ",")))
			continue
		}
		if m.name == "" {
			continue
		}
		// The label of mount -o context: none when the pod opted into
		// Recursive or the volume cannot be mounted so.
		var label string
		if len(mount.labels) == 1 && podPolicy != v1.SELinuxChangePolicyRecursive && contextMount {
			label = mount.labels[0]
		}
		policy := podPolicy
		if !contextMount || label == "" {
			policy = v1.SELinuxChangePolicyRecursive
		}
		logger.V(4).Info("Syncing pod volume", "pod", klog.KObj(pod), "volume", mount.name, "label", label,
			"uniqueVolumeName", m.name, "changePolicy", policy, "csiDriver", m.csiDriver)
		c.report(logger, c.cache.add(m.name, cache.MetaObjectToName(pod), label, policy, m.csiDriver))
	}
	return retryUnlessAllPermanent(errs)
}

// contextMount reports whether the volume would be mounted with
// -o context: an in-tree plugin that does, or a CSI driver whose CSIDriver
// says seLinuxMount (no CSIDriver: no).
func (c *Controller) contextMount(m mountable) (bool, error) {
	if m.csiDriver == "" {
		return m.contextMount, nil
	}
	d, err := c.csiDrivers.Get(m.csiDriver)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ptr.Deref(d.Spec.SELinuxMount, false), nil
}

// report records an Event on each conflict's pod. As upstream, a pod that
// is gone from the cache ends the reporting: the conflict went with it.
func (c *Controller) report(logger klog.Logger, conflicts []conflict) {
	for _, k := range conflicts {
		pod, err := c.pods.Pods(k.Pod.Namespace).Get(k.Pod.Name)
		if err != nil {
			logger.V(2).Info("Failed to get first pod for event", "pod", k.Pod, "err", err)
			return
		}
		c.recorder.Event(pod, v1.EventTypeNormal, k.reason(), k.message())
	}
}

// retryUnlessAllPermanent aggregates errs; when every one of them is a pod
// with multiple labels on a volume, the error is permanent.
func retryUnlessAllPermanent(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	agg := utilerrors.NewAggregate(errs)
	if slices.IndexFunc(errs, func(err error) bool { return !errors.Is(err, errMultipleLabels) }) < 0 {
		return controller.Permanent(agg)
	}
	return agg
}

// mountedVolume is a volume some container mounts, with the distinct SELinux
// labels of the containers that mount it (a container without SELinux
// options, its own or the pod's, adds none).
type mountedVolume struct {
	name   string
	labels []string
}

// mountedVolumes returns the volumes the pod's init, regular and ephemeral
// containers mount (not those only used as block devices).
func mountedVolumes(pod *v1.Pod) []mountedVolume {
	var out []mountedVolume
	index := map[string]int{}
	visit := func(ctr *v1.Container) {
		opts := effectiveSELinuxOptions(pod, ctr)
		for _, vm := range ctr.VolumeMounts {
			i, ok := index[vm.Name]
			if !ok {
				i = len(out)
				index[vm.Name] = i
				out = append(out, mountedVolume{name: vm.Name})
			}
			if opts == nil {
				continue
			}
			if l := fileLabel(opts); !slices.Contains(out[i].labels, l) {
				out[i].labels = append(out[i].labels, l)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		visit((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return out
}

// effectiveSELinuxOptions is the container's SELinux options, or else the
// pod's (the whole struct, not field by field, as the kubelet does).
func effectiveSELinuxOptions(pod *v1.Pod, ctr *v1.Container) *v1.SELinuxOptions {
	if sc := ctr.SecurityContext; sc != nil && sc.SELinuxOptions != nil {
		return sc.SELinuxOptions
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.SELinuxOptions
	}
	return nil
}

// fileLabel is upstream's label of SELinux options as the controller knows
// it: the fields joined as they are (the nodes' defaults are unknown here),
// "" for empty options.
func fileLabel(o *v1.SELinuxOptions) string {
	l := o.User + ":" + o.Role + ":" + o.Type + ":" + o.Level
	if l == ":::" {
		return ""
	}
	return l
}
