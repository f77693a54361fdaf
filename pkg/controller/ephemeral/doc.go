// Package ephemeral implements the ephemeral-volume-controller: for every
// generic ephemeral volume of a pod that is not being deleted it creates
// the PersistentVolumeClaim "<pod>-<volume>" from the volume's
// volumeClaimTemplate (its labels, annotations and spec), controlled by the
// pod (an ownerReference with controller and blockOwnerDeletion), so that
// the garbage collector removes it with the pod.
//
// A claim of that name that the pod does not control is left alone: the
// pod gets a Warning FailedBinding Event and the pod is retried with
// backoff (and at once when that claim is deleted). Pods are looked at when
// they are added and when a claim one of them names is deleted; pod
// volumes are immutable, so updates change nothing. The pod's
// status.resourceClaimStatuses belongs to the resource claim controller,
// not to this one.
//
// # Differences from upstream
//
// None visible: upstream's claim names, contents, Events and retries.
package ephemeral
