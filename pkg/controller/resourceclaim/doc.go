// Package resourceclaim implements the resourceclaim-controller
// (DynamicResourceAllocation): for each pod.spec.resourceClaims entry
// that names a ResourceClaimTemplate it creates the pod's ResourceClaim
// (generateName "<pod>-<claim>-", cut as upstream cuts it to 57
// characters; annotation resource.kubernetes.io/pod-claim-name; the pod as
// controller owner) and records it in pod.status.resourceClaimStatuses by
// server-side apply under the field manager "ResourceClaimController".
// It reserves an allocated claim for a pod that was bound without the
// scheduler, removes the reservations of finished and deleted pods,
// deallocates a claim nobody reserves (dropping the
// resource.kubernetes.io/delete-protection finalizer), and deletes a
// generated claim once its pod is done. Under DRAWorkloadResourceClaims
// it does the same for PodGroups' claims.
//
// Failed creations get the FailedResourceClaimCreation Event. Metrics:
// dynamic_resource_allocation_resourceclaim_creates_total and the
// dynamic_resource_allocation_resource_claims gauge, as upstream names
// them.
//
// # Differences from upstream
//
//   - The admin-access and prioritized-list checks upstream still carries
//     are dropped: both gates are locked on in v1.37.
//   - A claim that is already terminating is not deleted again.
//   - A PodGroup claim whose gate is off is a permanent error (an Event,
//     no retries) rather than a retried one.
package resourceclaim
