package statefulset

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultTemplate applies to a pod template the defaults the API server
// (and upstream's controller manager, through its scheme) gives the pod
// template of an apps/v1 StatefulSet in v1.37. Only the template matters
// here: it is all a revision holds. A revision recorded before the API
// server defaulted some field compares equal, once defaulted, to the set's
// template (see matchesLatestRevision).
func defaultTemplate(t *v1.PodTemplateSpec) {
	spec := &t.Spec
	defaultPodSpec(spec)
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	defaultResources(spec.Overhead)
	if spec.Resources != nil {
		defaultResources(spec.Resources.Limits)
		defaultResources(spec.Resources.Requests)
	}
}

func defaultPodSpec(spec *v1.PodSpec) {
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](v1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}
}

func defaultVolume(vol *v1.Volume) {
	src := &vol.VolumeSource
	if ptr.AllPtrFieldsNil(src) {
		src.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	if src.Image != nil && src.Image.PullPolicy == "" {
		src.Image.PullPolicy = pullPolicy(src.Image.Reference)
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr.To(v1.HostPathUnset)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr.To(v1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr.To(v1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptr.To(v1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIItems(src.DownwardAPI.Items)
	}
	if src.Projected != nil {
		defaultProjected(src.Projected)
	}
	defaultLegacyVolumeSources(src)
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		claim := &src.Ephemeral.VolumeClaimTemplate.Spec
		if claim.VolumeMode == nil {
			claim.VolumeMode = ptr.To(v1.PersistentVolumeFilesystem)
		}
		defaultResources(claim.Resources.Limits)
		defaultResources(claim.Resources.Requests)
	}
}

func defaultProjected(p *v1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = ptr.To(v1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		s := &p.Sources[i]
		if s.DownwardAPI != nil {
			defaultDownwardAPIItems(s.DownwardAPI.Items)
		}
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
			s.ServiceAccountToken.ExpirationSeconds = ptr.To[int64](3600)
		}
	}
}

func defaultDownwardAPIItems(items []v1.DownwardAPIVolumeFile) {
	for i := range items {
		defaultFieldRef(items[i].FieldRef)
	}
}

func defaultFieldRef(ref *v1.ObjectFieldSelector) {
	if ref != nil && ref.APIVersion == "" {
		ref.APIVersion = "v1"
	}
}

// defaultLegacyVolumeSources defaults the in-tree volume plugins' fields.
func defaultLegacyVolumeSources(src *v1.VolumeSource) {
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if rbd := src.RBD; rbd != nil {
		if rbd.RBDPool == "" {
			rbd.RBDPool = "rbd"
		}
		if rbd.RadosUser == "" {
			rbd.RadosUser = "admin"
		}
		if rbd.Keyring == "" {
			rbd.Keyring = "/etc/ceph/keyring"
		}
	}
	if az := src.AzureDisk; az != nil {
		if az.CachingMode == nil {
			az.CachingMode = ptr.To(v1.AzureDataDiskCachingReadWrite)
		}
		if az.FSType == nil {
			az.FSType = ptr.To("ext4")
		}
		if az.ReadOnly == nil {
			az.ReadOnly = ptr.To(false)
		}
		if az.Kind == nil {
			az.Kind = ptr.To(v1.AzureSharedBlobDisk)
		}
	}
	if sio := src.ScaleIO; sio != nil {
		if sio.StorageMode == "" {
			sio.StorageMode = "ThinProvisioned"
		}
		if sio.FSType == "" {
			sio.FSType = "xfs"
		}
	}
}

func defaultContainer(c *v1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = v1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			defaultFieldRef(from.FieldRef)
			if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
				from.FileKeyRef.Optional = ptr.To(false)
			}
		}
	}
	defaultResources(c.Resources.Limits)
	defaultResources(c.Resources.Requests)
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*v1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
}

// defaultResources rounds quantities up to milli-units, in place.
func defaultResources(list v1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}

// pullPolicy is Always for an image of tag latest (explicit, or implied
// by neither tag nor digest), IfNotPresent otherwise and for references
// that do not parse.
func pullPolicy(image string) v1.PullPolicy {
	if imageTag(image) == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// imageTag returns an image reference's tag, "latest" when it has neither
// tag nor digest, and "" for an empty or upper-case repository (which do
// not parse).
func imageTag(image string) string {
	name, _, digested := strings.Cut(image, "@")
	repo, tag := name, ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo, tag = name[:i], name[i+1:]
	}
	path := repo
	if first, rest, ok := strings.Cut(repo, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		path = rest
	}
	if path == "" || strings.ToLower(path) != path {
		return ""
	}
	if tag == "" && !digested {
		return "latest"
	}
	return tag
}
