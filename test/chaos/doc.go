// Package chaos runs the parity scenarios (test/parity) with a fault
// switched on for kcm's run, and optionally for upstream's as the control,
// and diffs the end state against upstream's calm run with parity's
// normaliser: faults change timing, never the end state (issue 43).
//
// The fault classes use the real mechanisms, never a mock:
//
//	throttle    API Priority and Fairness: a PriorityLevelConfiguration with
//	            one seat, one queue of length 1, and a FlowSchema
//	            (precedence 120, below system-leader-election's 100 so the
//	            Lease still renews) matching system:kube-controller-manager
//	            and every ServiceAccount of kube-system; the apiserver's
//	            total concurrency is lowered so that the level gets 1 seat.
//	            The apiserver answers 429 with Retry-After.
//	churn       kube-apiserver --min-request-timeout=5 and, since that
//	            flag spares watches that name a timeout (client-go's all
//	            do), the controller manager's connections cut every 5-10 s
//	            through a toxiproxy proxy: watches end and are resumed.
//	compaction  churn plus --etcd-compaction-interval=5s and
//	            --watch-cache=false: a resumed watch asks etcd for a
//	            compacted revision, gets 410 Gone and the informer relists.
//	tcp         toxiproxy (github.com/Shopify/toxiproxy/v2, in-process) on
//	            127.0.0.1 in front of the apiserver for the controller
//	            manager only (--kubeconfig to a copy naming the proxy):
//	            latency 50±50 ms throughout, connection resets, and one
//	            30-second blackhole.
//	restart     etcd, then kube-apiserver, restarted (SIGTERM, same command
//	            line) after the scenario's steps, while controllers settle.
//	crash       the controller manager SIGKILLed 3-5 times, a seeded 2-8 s
//	            after it last took the Lease, and started again.
//
// A fault is switched on once the controller manager leads and off after
// the scenario's last step (throttle, churn and compaction stay on 20 s at
// least; tcp and crash finish their schedules; restart acts then); the
// controller manager is brought back if the fault ended it (a lost Lease
// makes both binaries exit), and parity settles and captures.
//
// Count reads a run's audit log, logs and parity.log into the figures of
// the counts table: the controller manager's creates and deletes by
// resource, its 429s, LISTs and request rate during the fault, panics in
// its log and the settle time after the fault. Run is the driver behind
// cmd/chaos and `make chaos`; docs/CHAOS.md has the results.
package chaos
