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
package podautoscaler
