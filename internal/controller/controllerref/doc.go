// Package controllerref decides which objects a controller owns, adopting
// and releasing them through their controllerRef (the ownerReference with
// controller=true), as upstream's ControllerRefManager does.
//
// A Manager claims, for one controller object, a list of candidate objects
// of one kind (pods for the ReplicaSet controller, ReplicaSets for the
// Deployment controller, ...):
//
//   - an object controlled by someone else is never touched;
//   - an object controlled by the controller is kept while it matches the
//     selector, and released (its controllerRef removed) when it does not,
//     unless the controller is being deleted;
//   - an orphan that matches, is not being deleted, lives in the
//     controller's namespace, and whose controller is not being deleted is
//     adopted (a controllerRef with blockOwnerDeletion added), after the
//     canAdopt check - typically RecheckDeletionTimestamp over an uncached
//     GET of the controller - passed once per Manager.
//
// Adoption and release are strategic merge patches that also carry the
// object's UID, so that they cannot hit a new object of the same name.
//
// The package also maintains the informer indexes controllers look their
// objects up by: pods by controllerRef (PodControllerIndex) and any kind by
// controller UID (ControllerUIDIndex).
package controllerref
