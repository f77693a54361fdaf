// Package conformance runs upstream Kubernetes' own [Conformance] end-to-end
// specs (the e2e.test binary hack/tools builds from k8s.io/kubernetes) against
// local control planes from test/cluster, with kcm or upstream's
// kube-controller-manager, for `make conformance`.
//
// The specs to run are listed in specs.txt, one full spec name a line (as
// e2e.test prints it with --list-tests: container texts and leaf text joined
// by spaces). Specs that need containers, which kwok's fake nodes do not
// run, are listed with their reason in node.txt: make e2e-node runs them on
// a real node (test/node). Specs that fail with upstream's binary as well
// for another reason would be listed in excluded.txt. Neither list is run
// here unless asked.
//
// Every spec runs in its own e2e.test process with its own deadline, so a
// spec that hangs costs its timeout and no more. Specs are taken from one
// queue by a worker per cluster (Options.Clusters side by side), each worker
// running its specs one after the other on its own cluster. Each spec yields
// a Result (pass, fail or timeout, duration, failure reason), printed as a
// line when it ends; the run also writes a JUnit file and every spec's
// output under the output directory.
package conformance
