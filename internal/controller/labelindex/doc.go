// Package labelindex indexes an informer's objects by namespace and label,
// so that a label selector is answered from the objects that carry one of
// its required labels instead of by matching every object of the namespace.
//
// Upstream lists the whole namespace for each selector. With thousands of
// pods in one namespace, that scan dominated replicaset-controller's CPU
// during a rollout (ranking victims by co-location lists the pods of every
// sibling ReplicaSet).
package labelindex
