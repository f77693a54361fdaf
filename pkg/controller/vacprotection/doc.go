// Package vacprotection implements the
// volumeattributesclass-protection-controller (gated by
// VolumeAttributesClass, on in v1.37). It keeps the
// kubernetes.io/vac-protection finalizer on every live
// VolumeAttributesClass and removes it from a class being deleted once no
// PersistentVolume names it in spec.volumeAttributesClassName and no
// PersistentVolumeClaim names it in spec.volumeAttributesClassName,
// status.currentVolumeAttributesClassName or
// status.modifyVolumeStatus.targetVolumeAttributesClassName. Informer
// indexes from class name to volumes and claims answer the question.
//
// # Differences from upstream
//
// Upstream's rules, requests and Events; in addition, deletion tombstones of
// volumes and claims are handled (upstream drops them, leaving a class held
// until its next event).
package vacprotection
