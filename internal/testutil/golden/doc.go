// Package golden reads the inputs of the golden tests, which compare kcm's
// values with upstream's: JSON files in the tests' testdata directories.
// The generators in hack/tools/k8s (daemonsetgolden, deployhash,
// endpointsgolden, mirroringgolden) read the same files and run upstream's
// code on them to print the values the tests expect, so that the two sides
// cannot drift apart.
package golden
