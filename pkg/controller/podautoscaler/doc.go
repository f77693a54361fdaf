// Package podautoscaler implements the horizontal-pod-autoscaler-controller:
// every sync period (--horizontal-pod-autoscaler-sync-period, 15s) it
// computes, for each autoscaling/v2 HorizontalPodAutoscaler, the replica
// count its metrics ask for and writes it to the target's scale
// subresource.
//
// A sync of one HPA:
//
//  1. reads the target's scale through the REST mapper and the scale
//     client (AbleToScale, FailedGetScale on failure);
//  2. keeps a target scaled to zero by hand at zero (ScalingDisabled),
//     brings one outside [minReplicas, maxReplicas] inside, and otherwise
//     asks each metric for a count (replicas.go: Resource, ContainerResource,
//     Pods, Object, External; tolerance, missing metrics, unready pods and
//     the CPU initialization period) and takes the highest (ScalingActive);
//  3. stabilizes and limits that count (normalize.go, policies.go): without
//     spec.behavior, over --horizontal-pod-autoscaler-downscale-stabilization
//     and at most doubling; with it, over its stabilization windows and
//     within its scaling policies (ScalingLimited);
//  4. writes the scale if the count changed (SuccessfulRescale or
//     FailedRescale Events, ScaledToZero) and the status (currentReplicas,
//     desiredReplicas, currentMetrics, lastScaleTime, conditions,
//     observedGeneration) if it changed.
//
// Recommendations and scale events live in memory (history.go), as
// upstream's. The metrics APIs are read through package metrics.
//
// # Differences from upstream
//
// Upstream's computation, conditions, Events and status, its fixed-interval
// queue (every key back after the sync period, errors included) and its
// in-memory recommendations and scale events, on the injected clock. What
// differs:
//
//   - the three metrics APIs are read with client-go's REST client on
//     minimal API types of kcm's own (package metrics; k8s.io/metrics is not
//     a dependency): the same requests, paths and parameters as
//     k8s.io/metrics' clients, and their errors, so conditions and Events
//     read the same; they ask for JSON where upstream's resource client asks
//     for protobuf. Custom metrics are read in v1beta2, or v1beta1 when the
//     server prefers it, the version discovered again every sync period, as
//     upstream;
//   - the AmbiguousSelector message lists the HPAs sharing the pods sorted by
//     name (upstream: map order); the selector store is upstream's optimized
//     one (HPAOptimizedSelectorStore, on in v1.37) whatever the gate says,
//     which names at most two HPAs where the gate-off store names them all;
//   - a spec the API server's defaulting would have completed (a behavior
//     without select policies or policies, an object that did not come
//     through the API) is defaulted as the API server would
//     (defaultBehavior, policies.go), where upstream dereferences nil;
//   - the Event recorder is built when the controller starts running, not in
//     its constructor.
package podautoscaler
