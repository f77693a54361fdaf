// Package pvprotection implements the persistentvolume-protection-controller
// (alias pv-protection). It keeps the kubernetes.io/pv-protection finalizer
// on every PersistentVolume that is not being deleted (the admission plugin
// StorageObjectInUseProtection normally adds it at creation; this covers
// volumes created without it) and removes it from a volume being deleted
// once the volume is no longer Bound, so that a volume is never removed
// while a claim is bound to it.
//
// # Differences from upstream
//
// None visible: upstream's rules, requests and Events (the finalizer rules
// are shared with the other storage controllers in
// internal/controller/storageutil).
package pvprotection
