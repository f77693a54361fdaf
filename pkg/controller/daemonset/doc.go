// Package daemonset implements the daemonset-controller: it runs one pod
// of each DaemonSet on every node the DaemonSet selects, rolls those pods
// to a new template, and reports them in the DaemonSet's status, as
// upstream's controller does (names, labels, revisions, Events, order of
// operations).
//
// Which nodes should run a daemon pod (placement.go): the template's
// nodeName and its nodeSelector and required node affinity must match the
// node, and its tolerations plus the defaults every daemon pod gets must
// tolerate the node's NoSchedule and NoExecute taints; a pod already there
// stays while its NoExecute taints are tolerated. Pods are pinned to their
// node by a required node affinity term on metadata.name; the scheduler
// binds them.
//
// Per DaemonSet, a sync (sync.go):
//
//  1. waits, by returning an error, until the informers have seen the
//     controller's own writes (StaleControllerConsistencyDaemonSet);
//  2. claims pods (adopting matching orphans, releasing non-matching
//     ones) and ControllerRevisions, and finds or creates the revision of
//     the current template (history.go), whose hash labels the pods of
//     that template;
//  3. unless expectations from its last creations or deletions are still
//     outstanding, creates the missing pods and deletes those that must go
//     (manage.go): on nodes that no longer fit, failed ones (with a
//     per-node backoff), succeeded ones and surplus ones, at most
//     BurstReplicas of each per sync, creations in slow-start batches;
//  4. if that changed nothing and the strategy is RollingUpdate, deletes
//     old pods or creates new ones beside them within maxUnavailable and
//     maxSurge (rolling.go), and deletes revisions beyond
//     revisionHistoryLimit that no pod uses;
//  5. writes status (status.go) if it changed.
//
// Node changes are evaluated by a worker of their own (nodes.go), which
// enqueues only the DaemonSets a node's change concerns.
package daemonset
