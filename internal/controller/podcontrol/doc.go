// Package podcontrol creates, deletes and patches pods on behalf of a
// controller, and records upstream's Events for it on the owner:
// SuccessfulCreate "Created pod: <name>", FailedCreate "Error creating:
// <err>", SuccessfulDelete "Deleted pod: <name>" and FailedDelete "Error
// deleting: <err>".
//
// Pods created from a template get the template's labels, annotations,
// finalizers and spec, the controllerRef as their only ownerReference, and
// generateName "<owner name>-" (just "<owner name>" if the dash would make
// an invalid prefix), so the API server names them <owner>-<random>.
//
// Fake records calls for unit tests of controllers.
package podcontrol
