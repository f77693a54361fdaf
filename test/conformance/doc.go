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
//
// RunSuite is the other runner: specs against one cluster that exists
// already (make e2e-node's real node, make e2e-kubeadm's kubeadm cluster),
// the way the certification program runs the suite: parallel-safe specs
// side by side, then the [Serial] ones alone. Each finished spec is
// appended to a journal (results.jsonl) in the suite's directory, so a
// suite too long for one sitting resumes on a fresh cluster of the same
// shape with the specs left. all.txt lists every [Conformance] spec of
// e2e.test v1.37.1 (cmd/list-all writes it); kubeadm-excluded.txt, those
// that fail on the kubeadm cluster with upstream's binary too.
package conformance
