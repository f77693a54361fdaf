package legacytokencleaner

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// podSecretNames returns the names of the Secrets pod references, as
// upstream's VisitPodSecretNames finds them: image pull secrets, env and
// envFrom of all containers (init and ephemeral too), and the volume
// sources that name a Secret.
func podSecretNames(pod *v1.Pod) sets.Set[string] {
	names := sets.New[string]()
	add := func(n string) {
		if n != "" {
			names.Insert(n)
		}
	}
	for _, r := range pod.Spec.ImagePullSecrets {
		add(r.Name)
	}
	containers := func(c *v1.Container) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				add(e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		containers(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		containers(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		containers((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	for i := range pod.Spec.Volumes {
		s := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case s.AzureFile != nil:
			add(s.AzureFile.SecretName)
		case s.CephFS != nil && s.CephFS.SecretRef != nil:
			add(s.CephFS.SecretRef.Name)
		case s.Cinder != nil && s.Cinder.SecretRef != nil:
			add(s.Cinder.SecretRef.Name)
		case s.FlexVolume != nil && s.FlexVolume.SecretRef != nil:
			add(s.FlexVolume.SecretRef.Name)
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.Secret != nil {
					add(src.Secret.Name)
				}
			}
		case s.RBD != nil && s.RBD.SecretRef != nil:
			add(s.RBD.SecretRef.Name)
		case s.Secret != nil:
			add(s.Secret.SecretName)
		case s.ScaleIO != nil && s.ScaleIO.SecretRef != nil:
			add(s.ScaleIO.SecretRef.Name)
		case s.ISCSI != nil && s.ISCSI.SecretRef != nil:
			add(s.ISCSI.SecretRef.Name)
		case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
			add(s.StorageOS.SecretRef.Name)
		case s.CSI != nil && s.CSI.NodePublishSecretRef != nil:
			add(s.CSI.NodePublishSecretRef.Name)
		}
	}
	return names
}
