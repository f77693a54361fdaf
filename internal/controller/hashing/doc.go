// Package hashing computes the content hashes upstream controllers put in
// object names and labels, byte for byte as upstream does: an FNV-1a hash
// of a deep, pointer-following dump of the object (k8s.io/utils/dump),
// optionally salted with a collision count, rendered with
// rand.SafeEncodeString.
//
// The golden values in the tests were produced by upstream's own code; see
// hack/tools/k8s/deployhash.
package hashing
