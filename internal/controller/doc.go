// Package controller holds the machinery every controller shares. Nothing
// here decides anything about a resource; that is the controllers'.
//
// The files of this package:
//
//   - worker.go: the worker loop. Queue builds a rate-limited workqueue of
//     string keys with upstream's controller defaults (per-item exponential
//     backoff from 5 ms to 1000 s, an overall token bucket of 10 qps and
//     burst 100); Workers runs n workers over a queue once the given
//     caches have synced, recovers a panic in a sync as an error, retries
//     errors with backoff (up to MaxRetries when set), forgets a key whose
//     error is wrapped by Permanent (logged, not retried), and logs an
//     ExpectedRetry error (a normal step, such as a cache that has not seen
//     the controller's own write yet, StaleCache) at V(4) for its first
//     retries;
//   - ticks.go: QueueClock, the clock every workqueue is built with: a fake
//     clock in tests, else the real clock whose tickers of one period share
//     one timer;
//   - spacer.go: Spacer, which spaces out the writes that a burst of
//     informer events causes for one key;
//   - written.go: Written, which keeps, per key, the object as the API
//     server returned it from the controller's last write, until the
//     informer has caught up with it;
//   - events.go: NewRecorder, an Event recorder for a controller's
//     component name with client-go's aggregation and spam filtering, and
//     the function that stops it.
//
// Its subpackages:
//
//   - controllerref: ownerReference resolution and adoption (claiming,
//     adopting and releasing objects by their controllerRef) and the
//     informer indexes by controller;
//   - endpointutil: what the endpointslice-, endpoints- and
//     endpointslice-mirroring controllers share: pod-to-endpoint rules,
//     named ports, the Service-selector and slices-by-Service indexes,
//     trigger times, the slice generation tracker, upstream's deep hash and
//     the endpoint write spacing;
//   - expectations: the creations and deletions, and the resourceVersions,
//     a controller wrote and has not seen come back through its informers;
//   - hashing: upstream's content hashes for object names and labels;
//   - history: ControllerRevisions for the DaemonSet and StatefulSet
//     controllers, named and hashed as upstream's;
//   - labelindex: an informer index by namespace and label, so that a
//     selector is answered without scanning the namespace;
//   - nodeutil: Node helpers (conditions, taints, the pods-by-node index)
//     and the single-request taint and label patch;
//   - podcontrol: pod creation, deletion and patching on an owner's behalf,
//     with upstream's Events;
//   - podranking: the scale-down order of pods and the pod-state
//     predicates (active, terminating, ready, available);
//   - resourcemonitor: discovery of the resources a controller follows and
//     one handler per resource on shared informers (the garbage collector's
//     and the resource quota controller's);
//   - storageutil: the storage controllers' protection finalizers, the
//     pod-to-claim index and claim-to-volume resolution.
//
// docs/ARCHITECTURE.md's sections "Performance devices" and "Write
// policies" say where and why the controllers use QueueClock, Spacer,
// Written and expectations.
package controller
