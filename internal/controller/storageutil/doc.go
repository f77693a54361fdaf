// Package storageutil holds what the storage controllers share: upstream's
// protection finalizers and the rules for adding and removing them, and the
// pod-to-claim informer index (the claims a pod's volumes name, generic
// ephemeral volumes included).
package storageutil
