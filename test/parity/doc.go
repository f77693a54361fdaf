// Package parity runs the same scenario against upstream
// kube-controller-manager v1.37.1 and against kcm, each on a fresh local
// control plane (test/cluster), and diffs what the API ends up holding.
//
// A scenario is a YAML file in scenarios/: objects to apply, steps, and the
// kinds to capture afterwards. Adding a controller's scenarios means dropping
// files there; nothing else changes. A minimal one:
//
//	description: the default ServiceAccount is recreated after deletion
//	quick: true                               # also run by `go test` (not -short)
//	requires: [serviceaccount-controller]     # skipped while kcm lacks it
//	objects:
//	- {apiVersion: v1, kind: Namespace, metadata: {name: parity-sa}}
//	steps:
//	- wait: {kind: ServiceAccount, namespace: parity-sa, name: default}
//	- delete: {kind: ServiceAccount, namespace: parity-sa, name: default}
//	- wait: {kind: ServiceAccount, namespace: parity-sa, name: default, for: recreated}
//	capture:
//	- kind: ServiceAccount
//	- kind: Event
//
// Top-level fields: name (default: the file's base name), description, quick,
// requires (canonical controller names or aliases), nodes (kwok Nodes
// kwok-node-0… created before anything else; nothing waits for them),
// controllerManagerArgs (appended to kubeadm's command line for both
// binaries), apiServerArgs (appended to the kube-apiserver's, e.g. the
// feature gates and runtime-config of an alpha API), dualStack (IPv4 and IPv6 Service and pod ranges), metricsAPI
// (the test metrics API, test/metricsapi, runs beside the cluster, registered
// by APIService; metrics steps set its values), cloud ({args, config}: a
// cloud-controller-manager runs beside the controller manager with the
// parity test provider, test/parity/cloudprovider: upstream's,
// hack/tools/ccm, beside upstream, and kcm's beside kcm; args are appended
// to both command lines, config is the --cloud-config file), objects
// (applied in order before the steps), steps, settle (before the capture;
// default quiet 3s, timeout 60s), capture, ignore, and timeout (the whole run
// on one binary; default 5m).
//
// Steps, exactly one action each:
//
//	apply: <object or list>            server-side apply, field manager "parity", forced
//	create: <object or list>           plain create; with a sibling as: {user, groups} as that
//	                                   user (impersonated): a CSR's requester is then theirs
//	patch: {kind, namespace, name, type: merge|strategic|json, patch: …, subresource: status}
//	                                   selector instead of name: every object it selects
//	                                   fieldSelector too (or instead): "status.phase=Pending"
//	                                   "{{uid Kind namespace/name}}" (or "{{uid Kind name}}") in
//	                                   the patch is the live object's uid, for ownerReferences
//	                                   "{{now}}", "{{now +20s}}" in apply and patch: that moment
//	                                   (plus the offset), RFC 3339 UTC, for expirations
//	scale: {kind, namespace, name, replicas: 3}               through the scale subresource
//	setImage: {kind, namespace, name, container: app, image: nginx:2}
//	delete: {kind, namespace, name, propagation: Background|Foreground|Orphan}
//	                                   selector instead of name: every object it selects
//	wait: {kind, namespace, name, selector, fieldSelector, for: …, timeout: 60s}
//	controllerManager: stop|kill|start|restart              start/restart wait for the Lease
//	controllerManager: start-upstream  upstream's binary, whichever the run's: objects made under
//	                                   upstream, handed to the run's binary by stop then start
//	cloudControllerManager: stop|start|restart   the scenario's cloud-controller-manager (cloud)
//	settle: {quiet: 3s, timeout: 60s}  until the captured state stops changing
//	nodes: 2                           kwok Nodes kwok-node-0, -1 exist (one at a time: deterministic CIDRs)
//	metrics: {usage: [{namespace, selector, container, resources: {cpu: 200m}}],
//	          custom: [{namespace, resource: pods, selector, metric, value}], external: […]}
//	                                   values the metrics API serves from now on (metricsapi.Values)
//	evict: {namespace, name, expect: allowed|refused}        through the eviction API; refused: a
//	                                   429 with the DisruptionBudget cause. selector instead of
//	                                   name: the oldest Running pod it selects that is not deleting
//
// Every object reference may carry apiVersion; without it the kind is looked
// up in the server's API groups, core first. Wait conditions (polled, with a
// deadline; default 60s):
//
//	exists (default)          the named object exists
//	deleted                   it does not
//	recreated                 it exists with another uid than at the last delete step
//	count=N                   N objects match namespace and selector (no name)
//	condition=Ready[=False]   status.conditions has the type with the status (default True)
//	jsonpath={.spec.x}=v      the JSONPath renders v; !=v: it does not; "=" alone:
//	                          empty or absent; no "=": present and not empty
//
// Capture entries: {kind, apiVersion, namespaces, names, selector}; namespaces
// default to the Namespaces the scenario applies (all namespaces if it
// applies none), "*" means all. kind: Event captures Events reduced to
// (source, involved object, type, reason, message), counted; sources limits
// them to given reporting controllers, reasons to given reasons, and
// counts: false drops the counts.
//
// The normaliser (normalize.go) removes what differs between any two runs:
// uids, resourceVersions, managedFields, timestamps, IP addresses (numbered in
// order of appearance), cluster-specific values (CA certificates, the
// apiserver's URL), and replaces generated name suffixes by numbers in
// creation order; a CertificateSigningRequest's certificate becomes a
// summary (issuer, subject, SANs, usages, extensions, validity length);
// the endpointslice-controller's EndpointSlices are merged per Service,
// address type and ports (how upstream spreads endpoints over slices
// differs between its own runs), and endpoints, Endpoints subsets and
// addresses sorted (endpoints.go).
// ignore lists further paths to drop, "Kind:path" with
// dot-separated keys, [key] for keys containing dots and * for any key, e.g.
// "Pod:spec.nodeName" or "*:metadata.annotations[example.com/stamp]".
//
// A step failing on upstream makes the scenario an ERROR (the scenario is
// wrong); failing on kcm, the remaining steps are skipped and the failure is
// recorded at the top of kcm's capture, so it shows in the diff.
//
// A scenario is trusted only once upstream agrees with itself: `parity
// --self-check` runs every scenario twice on upstream and diffs the two.
// Each run starts a fresh cluster; runs go one after the other. The command
// (cmd/parity, `make parity`) writes per scenario the captures
// (<label>.yaml), diff.txt and, for failures, the cluster work dirs with
// every component's log under --out (default _output/parity).
// TestQuickScenarios runs the quick ones in `go test` without -short.
package parity
