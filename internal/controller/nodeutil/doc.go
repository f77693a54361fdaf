// Package nodeutil holds the Node helpers several node controllers share:
// looking up a node condition, matching taints, indexing Pods by the Node
// they are bound to, and writing a Node's taints and labels in a single
// request that cannot clobber a concurrent change.
package nodeutil
