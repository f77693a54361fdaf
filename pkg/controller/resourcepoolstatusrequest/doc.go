// Package resourcepoolstatusrequest implements the
// resourcepoolstatusrequest-controller (gated by DRAResourcePoolStatus,
// alpha and off in v1.37; the API is resource.k8s.io/v1alpha3). A
// ResourcePoolStatusRequest asks once for the state of a DRA driver's
// resource pools (optionally one pool); the controller answers it by
// writing its status, computed from the cached ResourceSlices,
// ResourceClaims and, under DRADeviceTaintRules, DeviceTaintRules:
//
//   - per pool, only the slices of its highest generation count; a pool
//     with fewer of them than resourceSliceCount is incomplete;
//   - totalDevices, allocatedDevices (devices in allocated claims' results,
//     each once, admin-access results left out), unavailableDevices
//     (devices with a NoSchedule or NoExecute taint, their own or from a
//     DeviceTaintRule whose selector matches them), availableDevices
//     (total less allocated less unavailable, at least 0),
//     resourceSliceCount, and nodeName when all slices name the same node;
//   - partitionSummary: for partitionable devices grouped by their slice's
//     partitionTypeAttribute (or the request's
//     defaultPartitionTypeAttribute if no slice of the pool declares one)
//     and its value, the group's size and how many of its free devices
//     still fit in the shared counters;
//   - shareableSummary for devices that allow multiple allocations;
//   - a structural problem is the pool's validationError with upstream's
//     prefix (PartitionTypeMissing:, PartitionCostMismatch:,
//     PartitionSummaryOverCap:, ShareableSummaryOverCap:), cut to 256 bytes.
//
// Pools are sorted by driver and name and cut to spec.limit (default 100);
// status.poolCount counts them all. The status carries the condition
// Complete=True, reason CalculationComplete, message "Calculated status for
// N pools" (with " (M incomplete)" when M returned pools have a validation
// error); a cache that cannot be listed gives Failed=True, reason
// CalculationFailed. A request with a status is never recomputed. While a
// pool is incomplete (PoolIncomplete:) nothing is written and the request
// is retried with backoff; after 5 retries it is dropped without a status,
// as upstream does, until it is updated or expires.
//
// Every 10 minutes on the controller's clock, requests are deleted (with
// their UID as a precondition) an hour after their Complete or Failed
// condition, or 24 hours after their creation if they never got a status.
//
// One worker; upstream's client identity
// (resourcepoolstatusrequest-controller) and metrics, labelled by
// driver_name: resourcepoolstatusrequest_controller_requests_processed_total,
// ..._request_processing_errors_total and
// ..._request_processing_duration_seconds (exponential buckets from 1 ms,
// factor 2, 15 of them), all ALPHA, recorded when a status write is
// attempted. Its workqueue is unnamed, as upstream's, so it has no
// workqueue metrics. No flags, no Events.
//
// # Differences from upstream
//
//   - Time (condition transitions, expiry, the cleanup period, the
//     duration metric) comes from the ControllerContext's clock, so tests
//     can step it.
//   - The retries of an incomplete pool are logged quietly (V(4)) until the
//     last, rather than each as an error: waiting for a driver's slices is
//     expected.
//   - Slices are read in name order, so that the device a validation
//     error names does not depend on the cache's order.
//   - A request deleted between its event and its sync is skipped on
//     NotFound only; upstream skips on any lister error.
package resourcepoolstatusrequest
