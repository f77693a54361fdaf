// Package bench measures a kube-controller-manager binary under load: the
// same scenarios, on identical fresh local clusters (test/cluster), for
// upstream's binary and for ours, one after the other in one invocation.
//
// A scenario is an optional setup followed by phases (phases.go):
//
//   - deployments: setup creates the kwok nodes and waits until they are
//     schedulable; then "create" (N Deployments × R replicas, all
//     available), "scale" (all to S replicas), "roll" (new image, rollout
//     complete), "delete" (background propagation, until no pod remains) and
//     "idle" (a fixed quiet period).
//   - nodes: "nodes" creates new kwok nodes and waits until every one has
//     lost the node.kubernetes.io/not-ready taint and, when the controller
//     manager runs with --allocate-node-cidrs, has spec.podCIDR.
//   - statefulsets (statefulsets.go): the deployments setup, then "create"
//     (Parallel StatefulSets, all pods available), "scale", "roll" (new
//     image, every update complete) and "delete".
//   - endpoints (services.go): the deployments setup, then Services each
//     over a Deployment: "create", "roll", "scale" (each until every
//     Service's EndpointSlices and Endpoints list exactly its ready pods)
//     and "delete" (until no pod, slice or Endpoints object remains).
//   - daemonsets (daemonsets.go): its own nodes, then "create" (the
//     DaemonSets, each with an available pod on every node), "add-nodes"
//     (more nodes, with each new node's node-to-pods time), "roll" and
//     "delete".
//   - jobs (jobs.go): its own nodes, then "indexed" (one Indexed Job) and
//     "small" (many small Jobs), each until every Job is Complete with all
//     its completions succeeded.
//   - volumes (volumes.go): "volumes" (hostPath PersistentVolumes),
//     "bind" (claims that fit them, until all are Bound) and "reclaim"
//     (the claims deleted, until the volumes are).
//   - dra (dra.go): Deployments whose pods each get a claim from a
//     template, on a driver's ResourceSlices: "create", "roll", "taint"
//     (NoExecute DeviceTaintRules) and "delete".
//   - scale (scale.go): sig-scalability's envelope at --scale-nodes:
//     "join" (nodes under two DaemonSets, node-to-pods latency), "fill"
//     (30 pods a node), "roll" (a tenth), "services", "outage" (a tenth of
//     the nodes silent, then back), "delete-namespaces" (half the pods)
//     and "idle".
//
// docs/BENCHMARKS.md, "What runs", has every phase's load and wait.
//
// For every phase it records wall time, the controller manager's CPU
// seconds (utime+stime of /proc/<pid>/stat), its peak and final RSS (VmRSS of
// /proc/<pid>/status sampled every 200ms, and VmHWM) (metrics.go), and the
// API requests it issued by verb and resource, counted from the
// kube-apiserver's audit log and attributed to phases by timestamp
// (audit.go), so that both binaries are counted the same way. report.go
// renders one markdown table with ours/upstream ratios and the raw figures
// as JSON; run.go drives everything, and decides from our binary's
// controller registry which phases it can run at all.
//
// It is a measurement, not a test: nothing asserts a time. Every wait has a
// deadline and a phase that misses it is reported as timed out.
package bench
